// Hostile and broken inputs: each gives a clear diagnostic (or an I/O error
// for unusable paths), never a crash, and quickly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;
using testing::dump;
using testing::has_code;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("reflex_bad_input_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::all, ec);
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  CompileResult check(const std::string& path) { return compile({path}, CompileOptions{}); }
  fs::path dir_;
};

TEST_F(BadInput, EmptyFile) {
  CompileResult r = check(write("empty.rfx", ""));
  EXPECT_FALSE(r.io_error);
  EXPECT_TRUE(has_code(r, "E009")) << dump(r);
}

TEST_F(BadInput, BinaryFile) {
  std::string bytes = "reflex 1\n";
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  CompileResult r = check(write("binary.rfx", bytes));
  EXPECT_TRUE(has_code(r, "E003")) << dump(r);
  EXPECT_EQ(r.errors(), 1) << dump(r);
}

TEST_F(BadInput, InvalidUtf8) {
  CompileResult r = check(write("latin1.rfx", "reflex 1\nclass caf\xe9 \"x\"\n"));
  ASSERT_TRUE(has_code(r, "E002")) << dump(r);
  EXPECT_EQ(r.diagnostics[0].loc.line, 2);
  EXPECT_EQ(r.diagnostics[0].loc.col, 10);
}

TEST_F(BadInput, OverlongUtf8IsInvalid) {
  CompileResult r = check(write("overlong.rfx", "reflex 1\n# \xc0\xaf\n"));
  EXPECT_TRUE(has_code(r, "E002")) << dump(r);
}

TEST_F(BadInput, FiftyMegabytes) {
  fs::path p = dir_ / "huge.rfx";
  {
    std::ofstream out(p, std::ios::binary);
    std::string line = "# padding padding padding padding padding padding padding padding\n";
    out << "reflex 1\n";
    for (size_t n = 0; n < (50u << 20); n += line.size()) out << line;
  }
  auto t0 = std::chrono::steady_clock::now();
  CompileResult r = check(p.string());
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(has_code(r, "E001")) << dump(r);
  EXPECT_EQ(r.errors(), 1);
  EXPECT_LT(secs, 5.0);  // rejected by size, not parsed
}

TEST_F(BadInput, HundredThousandNestedBrackets) {
  std::string text = "reflex 1\nsignature s { on gpu match /^(?P<x>\\d)/ when ";
  text += std::string(100000, '(') + "x == 1" + std::string(100000, ')') + " }\n";
  CompileResult r = check(write("deep.rfx", text));
  EXPECT_TRUE(has_code(r, "E004")) << dump(r);
}

TEST_F(BadInput, DeepRegexNesting) {
  std::string text =
      "reflex 1\npattern p = /" + std::string(50000, '(') + "a" + std::string(50000, ')') + "/\n";
  CompileResult r = check(write("deep_regex.rfx", text));
  EXPECT_TRUE(has_code(r, "E004")) << dump(r);
}

TEST_F(BadInput, LongNotChain) {
  std::string text = "reflex 1\nsignature s { on gpu match /^(?P<x>\\d)/ when ";
  for (int i = 0; i < 100000; ++i) text += "not ";
  text += "x == 1 }\n";
  CompileResult r = check(write("nots.rfx", text));
  EXPECT_TRUE(has_code(r, "E004")) << dump(r);
}

TEST_F(BadInput, UnterminatedStringAndRegex) {
  CompileResult r = check(
      write("unterminated.rfx", "reflex 1\nclass a \"never closed\npattern p = /never closed\n"));
  EXPECT_TRUE(has_code(r, "E006")) << dump(r);
  EXPECT_TRUE(has_code(r, "E007")) << dump(r);
}

TEST_F(BadInput, NonexistentPathIsIoError) {
  CompileResult r = check((dir_ / "nope.rfx").string());
  EXPECT_TRUE(r.io_error);
  EXPECT_NE(r.io_message.find("no such file"), std::string::npos) << r.io_message;
}

// A device or FIFO never ends or blocks: refused by its type, before a read.
TEST_F(BadInput, DeviceAndFifoAreIoErrorsNotEndlessReads) {
  CompileResult r = check("/dev/zero");
  EXPECT_TRUE(r.io_error);
  EXPECT_NE(r.io_message.find("not a regular file (a character device)"), std::string::npos)
      << r.io_message;
  const std::string fifo = (dir_ / "k.rfx").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = check(fifo);
  EXPECT_TRUE(r.io_error);
  EXPECT_NE(r.io_message.find("not a regular file (a FIFO)"), std::string::npos) << r.io_message;
}

TEST_F(BadInput, DirectoryWithoutRfxIsIoError) {
  write("README.md", "nothing here");
  CompileResult r = check(dir_.string());
  EXPECT_TRUE(r.io_error);
  EXPECT_NE(r.io_message.find("no .rfx files"), std::string::npos) << r.io_message;
}

TEST_F(BadInput, UnreadableFile) {
  std::string p = write("secret.rfx", "reflex 1\n");
  ASSERT_EQ(::chmod(p.c_str(), 0), 0);
  // Root reads any file regardless of mode bits: then there is nothing to test.
  if (std::ifstream(p).good()) GTEST_SKIP() << "running as root: mode 000 is still readable";
  CompileResult r = check(p);
  EXPECT_TRUE(r.io_error);
  EXPECT_NE(r.io_message.find("cannot read"), std::string::npos) << r.io_message;
}

TEST_F(BadInput, DirectoryIsLoadedRecursivelyInSortedOrder) {
  fs::create_directories(dir_ / "b");
  write("b/z.rfx", "reflex 1\nclass z \"Z\"\n");
  write("a.rfx", "reflex 1\nclass a \"A\"\n");
  write("c.txt", "ignored");
  CompileResult r = check(dir_.string());
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_LT(r.files[0], r.files[1]);
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_EQ(r.kb->classes.size(), 2u);
}

TEST_F(BadInput, ErrorsInEveryFileAreReported) {
  write("one.rfx", "reflex 1\nclass a < nope \"A\"\n");
  write("two.rfx", "reflex 1\nsignature s { on gpux match /^x/ }\n");
  CompileResult r = check(dir_.string());
  std::set<std::string> files;
  for (const auto& d : r.diagnostics) files.insert(fs::path(d.loc.file).filename().string());
  EXPECT_EQ(files.size(), 2u) << dump(r);
  std::string text = dump(r);
  EXPECT_NE(text.find("2 errors generated in 2 files."), std::string::npos) << text;
}

TEST_F(BadInput, LongAndChainIsNotRecursion) {
  std::string text = "reflex 1\nsignature s { on gpu match /^(?P<x>\\d)/ field x: int when x == 1";
  for (int i = 0; i < 100000; ++i) text += " and x == 1";
  text += " }\n";
  CompileResult r = check(write("chain.rfx", text));
  EXPECT_EQ(r.errors(), 0) << dump(r);
  ASSERT_TRUE(r.kb);
  ASSERT_TRUE(r.kb->signatures[0].when);
  EXPECT_EQ(r.kb->signatures[0].when->children.size(), 100001u);
}

TEST_F(BadInput, DeepPatternAndExtendsChains) {
  std::string text = "reflex 1\n";
  for (int i = 0; i < 5000; ++i)
    text += "pattern p" + std::to_string(i) + " = p" + std::to_string(i + 1) + "\n";
  text += "pattern p5000 = /^x/\nsignature s { on gpu match p0 }\n";
  for (int i = 0; i < 5000; ++i)
    text += "signature e" + std::to_string(i) + " extends e" + std::to_string(i + 1) + " { }\n";
  text += "signature e5000 { on gpu match /^y/ }\n";
  CompileResult r = check(write("chains.rfx", text));
  EXPECT_TRUE(has_code(r, "E004")) << dump(r).substr(0, 2000);
}

}  // namespace
}  // namespace reflex
