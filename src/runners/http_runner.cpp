// The http runner: RunRequest -> HttpSpec -> resolve, egress check, connect, write,
// read (per redirect hop) on one io_context -> RunResult.
#include "runners/http_runner.h"

#include <baton/workflow.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "runners/http_spec.h"
#include "runners/shell_result.h"

namespace baton {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using runners::HttpSpec;
using runners::HttpUrl;
using runners::IpAddress;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

IpAddress ToIp(const net::ip::address& a) {
  if (a.is_v4()) return IpAddress::V4(a.to_v4().to_uint());
  return IpAddress::V6(a.to_v6().to_bytes());
}

bool IsJsonType(std::string_view content_type) {
  std::string media = Lower(content_type.substr(0, content_type.find(';')));
  while (!media.empty() && std::isspace(static_cast<unsigned char>(media.back()))) media.pop_back();
  size_t start = media.find_first_not_of(" \t");
  media = start == std::string::npos ? "" : media.substr(start);
  return media == "application/json" || media.ends_with("+json");
}

Json BodyValue(const std::string& body, const std::optional<std::string>& content_type) {
  if (body.empty()) return "";
  if (!content_type || IsJsonType(*content_type)) {
    Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) return parsed;
  }
  return runners::SanitizeUtf8(body);
}

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

class HttpRunner;

// One request (all its redirect hops). Lives on the I/O thread; every handler holds a
// shared_ptr and does nothing once `done` is set.
class Call : public std::enable_shared_from_this<Call> {
 public:
  Call(HttpRunner* runner, net::io_context& io, std::string id, HttpSpec spec,
       RunCallbacks callbacks)
      : runner_(runner),
        id_(std::move(id)),
        spec_(std::move(spec)),
        callbacks_(std::move(callbacks)),
        resolver_(io),
        deadline_(io),
        io_(io) {}

  const std::string& id() const { return id_; }
  void Begin();
  void Finish(RunResult result);
  void Abort(const std::string& message) {
    RunResult r;
    r.status = Status(errc::kCancelled, message);
    Finish(std::move(r));
  }

 private:
  std::string Prefix() const { return spec_.method + " " + spec_.url.ToString(); }
  void Fail(const char* code, const std::string& message, Json output = nullptr,
            Json details = nullptr) {
    RunResult r;
    r.status = Status(code, Prefix() + ": " + message);
    r.output = std::move(output);
    r.error_details = std::move(details);
    Finish(std::move(r));
  }
  void StartHop();
  void Connect(const std::vector<tcp::endpoint>& candidates);
  void Send();
  void OnResponse(beast::error_code ec);
  Json ResponseJson(bool with_body) const;
  bool FollowRedirect(int status);

  HttpRunner* runner_;
  std::string id_;
  HttpSpec spec_;
  RunCallbacks callbacks_;
  tcp::resolver resolver_;
  net::steady_timer deadline_;
  net::io_context& io_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  std::optional<http::response_parser<http::string_body>> parser_;
  int redirects_ = 0;
  bool done_ = false;
};

class HttpRunner final : public Runner {
 public:
  explicit HttpRunner(const HttpRunnerOptions& options)
      : options_(options), guard_(options.allow), work_(net::make_work_guard(io_)) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~HttpRunner() override { Shutdown(); }

  void Start(const RunRequest& request, RunCallbacks callbacks) override {
    std::unique_lock lock(mu_);
    if (stopped_) {
      lock.unlock();
      RunResult r;
      r.status = Status(errc::kCancelled, "the http runner is shut down");
      if (callbacks.on_done) callbacks.on_done(std::move(r));
      return;
    }
    // Posted under the lock: Shutdown's cancel-all is queued after every accepted Start.
    net::post(io_, [this, request, callbacks = std::move(callbacks)]() mutable {
      Result<HttpSpec> spec =
          runners::ParseHttpSpec(request.spec, options_.default_max_output, options_.default_timeout);
      if (!spec.ok()) {
        RunResult r;
        r.status = spec.status();
        if (callbacks.on_done) callbacks.on_done(std::move(r));
        return;
      }
      auto call = std::make_shared<Call>(this, io_, request.assignment_id, std::move(*spec),
                                         std::move(callbacks));
      calls_.emplace(request.assignment_id, call);
      call->Begin();
    });
  }

  void Cancel(const std::string& assignment_id) override {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    net::post(io_, [this, assignment_id] {
      auto range = calls_.equal_range(assignment_id);
      std::vector<std::shared_ptr<Call>> hit;
      for (auto it = range.first; it != range.second; ++it) hit.push_back(it->second);
      for (auto& call : hit) call->Abort("cancelled");
    });
  }

  void Shutdown() override {
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      net::post(io_, [this] {
        std::vector<std::shared_ptr<Call>> all;
        for (auto& [id, call] : calls_) all.push_back(call);
        for (auto& call : all) call->Abort("the http runner is shut down");
        // Outstanding operations (a slow DNS lookup) need not finish: nothing waits for
        // them any more.
        io_.stop();
      });
    }
    if (thread_.joinable()) thread_.join();
  }

  const HttpRunnerOptions& options() const { return options_; }
  const runners::EgressGuard& guard() const { return guard_; }
  void Forget(const std::string& id, const Call* call) {
    auto range = calls_.equal_range(id);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.get() == call) {
        calls_.erase(it);
        return;
      }
    }
  }

 private:
  const HttpRunnerOptions options_;
  const runners::EgressGuard guard_;
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  std::thread thread_;
  std::mutex mu_;
  bool stopped_ = false;
  std::unordered_multimap<std::string, std::shared_ptr<Call>> calls_;  // I/O thread only
};

void Call::Begin() {
  if (callbacks_.on_started) callbacks_.on_started();
  if (done_) return;
  if (spec_.timeout.count() > 0) {
    deadline_.expires_after(std::chrono::milliseconds(spec_.timeout.count()));
    deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->done_) return;
      RunResult r;
      r.status = Status(errc::kTimeout, self->Prefix() + ": no response within " +
                                            FormatDuration(self->spec_.timeout));
      self->Finish(std::move(r));
    });
  }
  StartHop();
}

void Call::StartHop() {
  const HttpUrl& url = spec_.url;
  if (runners::ParseIpAddress(url.host)) {
    beast::error_code ec;
    net::ip::address address = net::ip::make_address(url.host, ec);
    if (ec) return Fail(errc::kValidation, "bad IP address '" + url.host + "'");
    return Connect({tcp::endpoint(address, url.port)});
  }
  resolver_.async_resolve(
      url.host, std::to_string(url.port),
      [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
        if (self->done_) return;
        if (ec) {
          return self->Fail(errc::kNetwork,
                            "cannot resolve '" + self->spec_.url.host + "': " + ec.message());
        }
        std::vector<tcp::endpoint> endpoints;
        for (const auto& entry : results) endpoints.push_back(entry.endpoint());
        self->Connect(endpoints);
      });
}

void Call::Connect(const std::vector<tcp::endpoint>& candidates) {
  // Only addresses the guard passes are tried, and exactly those are connected to.
  std::vector<tcp::endpoint> allowed;
  Status refused;
  for (const tcp::endpoint& e : candidates) {
    Status s = runner_->guard().Check(ToIp(e.address()));
    if (s.ok()) {
      allowed.push_back(e);
    } else if (refused.ok()) {
      refused = s;
    }
  }
  if (allowed.empty()) {
    if (refused.ok()) return Fail(errc::kNetwork, "'" + spec_.url.host + "' has no address");
    return Fail(errc::kNetwork, refused.message());
  }
  stream_.emplace(io_);
  stream_->async_connect(allowed, [self = shared_from_this()](beast::error_code ec,
                                                              const tcp::endpoint&) {
    if (self->done_) return;
    if (ec) {
      return self->Fail(errc::kNetwork,
                        "cannot connect to " + self->spec_.url.Authority() + ": " + ec.message());
    }
    self->Send();
  });
}

void Call::Send() {
  const HttpUrl& url = spec_.url;
  request_ = {};
  request_.method_string(spec_.method);
  request_.target(url.target);
  request_.version(11);
  request_.set(http::field::host, url.Authority());
  request_.set(http::field::user_agent, runner_->options().user_agent);
  for (const auto& [name, value] : spec_.headers) {
    std::string lower = Lower(name);
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection") continue;
    request_.set(name, value);
  }
  if (spec_.has_body) request_.body() = spec_.body;
  request_.keep_alive(false);
  request_.prepare_payload();
  http::async_write(*stream_, request_,
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      if (self->done_) return;
                      if (ec) return self->Fail(errc::kNetwork, "sending the request: " + ec.message());
                      self->buffer_.clear();
                      self->parser_.emplace();
                      self->parser_->header_limit(64 * 1024);
                      self->parser_->body_limit(self->spec_.max_output);
                      if (self->spec_.method == "HEAD") self->parser_->skip(true);
                      http::async_read(*self->stream_, self->buffer_, *self->parser_,
                                       [self](beast::error_code rec, size_t) {
                                         if (!self->done_) self->OnResponse(rec);
                                       });
                    });
}

Json Call::ResponseJson(bool with_body) const {
  const auto& res = parser_->get();
  Json headers = Json::object();
  for (const auto& field : res) {
    std::string name = Lower(field.name_string());
    std::string value = runners::SanitizeUtf8(field.value());
    auto it = headers.find(name);
    if (it == headers.end()) {
      headers[name] = value;
    } else {
      *it = it->get<std::string>() + ", " + value;
    }
  }
  Json out = {{"status", res.result_int()}, {"headers", std::move(headers)}};
  if (with_body) {
    std::optional<std::string> content_type;
    if (auto it = res.find(http::field::content_type); it != res.end()) {
      content_type = std::string(it->value());
    }
    out["body"] = BodyValue(res.body(), content_type);
  }
  return out;
}

void Call::OnResponse(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    Json output = parser_->is_header_done() ? ResponseJson(false) : Json(nullptr);
    return Fail(errc::kNetwork,
                "response body over max_output (" + std::to_string(spec_.max_output) + " bytes)",
                std::move(output), Json{{"max_output", spec_.max_output}});
  }
  if (ec == http::error::header_limit) {
    return Fail(errc::kNetwork, "response header over 64 KiB");
  }
  if (ec) return Fail(errc::kNetwork, "reading the response: " + ec.message());
  beast::error_code ignored;
  stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_->close();
  const int status = static_cast<int>(parser_->get().result_int());
  if (IsRedirect(status) && spec_.max_redirects > 0 && FollowRedirect(status)) return;
  if (done_) return;
  RunResult r;
  r.output = ResponseJson(true);
  if (!spec_.Accepts(status)) {
    r.status = Status(errc::kHttpStatus, Prefix() + " returned " + std::to_string(status));
    r.error_details = Json{{"status", status}};
  }
  Finish(std::move(r));
}

// Starts the next hop and returns true, or returns false to report this response as it
// is (no Location), or fails the call.
bool Call::FollowRedirect(int status) {
  const auto& res = parser_->get();
  auto loc = res.find(http::field::location);
  if (loc == res.end()) return false;
  const std::string location(loc->value());
  if (redirects_ >= spec_.max_redirects) {
    Fail(errc::kHttpStatus,
         "stopped after " + std::to_string(spec_.max_redirects) + " redirects: " +
             std::to_string(status) + " to " + location,
         ResponseJson(true), Json{{"status", status}});
    return true;
  }
  Result<HttpUrl> next = runners::ResolveLocation(spec_.url, location);
  if (!next.ok()) {
    Fail(errc::kHttpStatus,
         "returned " + std::to_string(status) + " with a Location that cannot be followed: " +
             next.status().message(),
         ResponseJson(true), Json{{"status", status}});
    return true;
  }
  ++redirects_;
  if (next->host != spec_.url.host || next->port != spec_.url.port) {
    std::erase_if(spec_.headers, [](const auto& h) {
      std::string n = Lower(h.first);
      return n == "authorization" || n == "cookie" || n == "proxy-authorization";
    });
  }
  if (status == 303 && spec_.method != "HEAD") {
    spec_.method = "GET";
    spec_.has_body = false;
    spec_.body.clear();
    std::erase_if(spec_.headers, [](const auto& h) { return Lower(h.first) == "content-type"; });
  }
  spec_.url = *next;
  StartHop();
  return true;
}

void Call::Finish(RunResult result) {
  if (done_) return;
  done_ = true;
  deadline_.cancel();
  resolver_.cancel();
  if (stream_) {
    beast::error_code ignored;
    stream_->socket().close(ignored);
  }
  auto self = shared_from_this();  // the map may hold the last reference
  runner_->Forget(id_, this);
  if (callbacks_.on_done) callbacks_.on_done(std::move(result));
}

}  // namespace

Result<HttpRunnerOptions> HttpRunnerOptionsFromEnv() {
  HttpRunnerOptions options;
  const char* allow = std::getenv("BATON_HTTP_ALLOW");
  if (!allow || !*allow) return options;
  Result<std::vector<runners::Cidr>> cidrs = runners::ParseCidrList(allow);
  if (!cidrs.ok()) {
    return Status(errc::kValidation, "BATON_HTTP_ALLOW: " + cidrs.status().message());
  }
  options.allow = std::move(*cidrs);
  return options;
}

std::unique_ptr<Runner> NewHttpRunner(const HttpRunnerOptions& options) {
  return std::make_unique<HttpRunner>(options);
}

}  // namespace baton
