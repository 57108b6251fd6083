// The HTTP the deployment commands speak (the Alertmanager client, the
// /metrics endpoint), in a module of its own that is loaded on first use.
// cpp-httplib brings OpenSSL: loading libssl/libcrypto and cpp-httplib's
// OPENSSL_init_ssl at start-up were ~2.9 ms of every `reflex` run (a sixth
// of `events --threads 2`'s serial start on the 256 MB bench), for commands
// that never open a connection.
#pragma once

#include <functional>
#include <string>

namespace reflex {

struct HttpReply {
  bool reached = false;  // a response came back (any status)
  int status = 0;
  std::string body;
  std::string error;  // why not, when !reached
};

// An answer to a GET, from a server's handler.
struct HttpAnswer {
  int status = 404;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// The module's functions; both sides are built from this header in one
// build, so C++ types cross the boundary as they are.
struct HttpApi {
  // POST `body` to base_url + path (base_url: http://host:port).
  HttpReply (*post)(const std::string& base_url, const std::string& path, const std::string& body,
                    const std::string& content_type, int connect_timeout_s, int io_timeout_s);
  // Answers every GET with handler(path) on addr:port, in a thread of its
  // own; a handle for stop(), or nullptr and *err.
  void* (*serve)(const std::string& addr, int port,
                 std::function<HttpAnswer(const std::string& path)> handler, std::string* err);
  // Stops the server, joins its thread and frees it.
  void (*stop)(void* server);
};

// reflex_http.so's functions (module_loader.h), loaded once; nullptr and
// *err when it cannot be.
const HttpApi* http_api(std::string* err);

}  // namespace reflex

// The module's one exported symbol.
extern "C" const reflex::HttpApi* reflex_http_api_v1();
