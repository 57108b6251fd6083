// reflex_http.so: http_api.h's functions over cpp-httplib (see there why it
// is a module of its own).
#include <httplib.h>

#include <memory>
#include <thread>

#include "reflex/modules/http_api.h"

namespace {

using reflex::HttpApi;
using reflex::HttpReply;

HttpReply post(const std::string& base_url, const std::string& path, const std::string& body,
               const std::string& content_type, int connect_timeout_s, int io_timeout_s) {
  httplib::Client cli(base_url);
  cli.set_connection_timeout(connect_timeout_s, 0);
  cli.set_read_timeout(io_timeout_s, 0);
  cli.set_write_timeout(io_timeout_s, 0);
  auto res = cli.Post(path, body, content_type);
  HttpReply r;
  if (!res) {
    r.error = httplib::to_string(res.error());
    return r;
  }
  r.reached = true;
  r.status = res->status;
  r.body = res->body;
  return r;
}

struct Server {
  httplib::Server svr;
  std::thread th;
};

void* serve(const std::string& addr, int port,
            std::function<reflex::HttpAnswer(const std::string&)> handler, std::string* err) {
  auto s = std::make_unique<Server>();
  s->svr.Get(".*",
             [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
               reflex::HttpAnswer a = handler(req.path);
               res.status = a.status;
               res.set_content(a.body, a.content_type);
             });
  if (!s->svr.bind_to_port(addr.c_str(), port)) {
    *err = "cannot listen on " + addr + ":" + std::to_string(port);
    return nullptr;
  }
  Server* raw = s.get();
  s->th = std::thread([raw] { raw->svr.listen_after_bind(); });
  return s.release();
}

void stop(void* server) {
  std::unique_ptr<Server> s(static_cast<Server*>(server));
  if (!s) return;
  s->svr.stop();
  if (s->th.joinable()) s->th.join();
}

constexpr HttpApi kApi{post, serve, stop};

}  // namespace

extern "C" const HttpApi* reflex_http_api_v1() {
  return &kApi;
}
