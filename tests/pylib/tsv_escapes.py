"""The escapes of the project's tab-separated test tables (the peer-parity
cases, the emitter catalogs): a tab is written \\t, a backslash \\\\, and the
physical lines of a multi-line message are separated by \\n."""


def unescape(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[text[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
