// The http runner: RunRequest -> HttpSpec -> resolve, egress check, connect, TLS
// handshake for https, write, read, close (per redirect hop) on one io_context ->
// RunResult. The only translation unit with Asio's and Beast's HTTP and SSL headers;
// what a response means is in runners/http_response.h, TLS set-up in runners/http_tls.h.
#include "runners/http_runner.h"
#include "common/thread_name.h"

#include <baton/workflow.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "runners/http_response.h"
#include "runners/http_spec.h"
#include "runners/http_tls.h"

namespace baton {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using runners::HttpSpec;
using runners::HttpUrl;
using runners::IpAddress;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// How long a finished https exchange waits for the server's close_notify before it
// closes the connection anyway.
constexpr std::chrono::milliseconds kTlsCloseWait{500};

IpAddress ToIp(const net::ip::address& a) {
  if (a.is_v4()) return IpAddress::V4(a.to_v4().to_uint());
  return IpAddress::V6(a.to_v6().to_bytes());
}

class HttpRunner;

// One request (all its redirect hops). Lives on the I/O thread; every handler holds a
// shared_ptr and does nothing once `done` is set. A hop's stream is replaced only when
// none of its operations is pending (each hop ends in its read or its close handler).
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
        close_timer_(io),
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
  void Fail(const std::string& code, const std::string& message, Json output = nullptr,
            Json details = nullptr) {
    RunResult r;
    r.status = Status(code, Prefix() + ": " + message);
    r.output = std::move(output);
    r.error_details = std::move(details);
    Finish(std::move(r));
  }
  void Fail(const Status& status) { Fail(status.code(), status.message()); }
  beast::tcp_stream& Tcp() { return tls_ ? tls_->next_layer() : *tcp_; }
  void StartHop();
  void Connect(const std::vector<tcp::endpoint>& candidates);
  void Handshake();
  void Send();
  template <class Stream>
  void Exchange(Stream& stream);
  void OnResponse(beast::error_code ec);
  Json ResponseJson(bool with_body) const;
  void Close();
  void CloseTcp();
  void AfterClose();

  HttpRunner* runner_;
  std::string id_;
  HttpSpec spec_;
  RunCallbacks callbacks_;
  tcp::resolver resolver_;
  net::steady_timer deadline_;
  net::steady_timer close_timer_;  // bounds the wait for a TLS close_notify
  net::io_context& io_;
  std::optional<beast::tcp_stream> tcp_;  // this hop's connection: http
  std::optional<TlsStream> tls_;          // or https
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  std::optional<http::response_parser<http::string_body>> parser_;
  std::optional<RunResult> result_;  // the final result, while the connection closes
  int redirects_ = 0;
  int closes_ = 0;  // numbers the closes, for close_timer_'s handler
  bool handshaking_ = false;
  bool done_ = false;
};

class HttpRunner final : public Runner {
 public:
  explicit HttpRunner(const HttpRunnerOptions& options)
      : options_(options), guard_(options.allow), work_(net::make_work_guard(io_)) {
    thread_ = std::thread([this] {
      SetThreadName("baton-http-step");
      io_.run();
    });
  }
  ~HttpRunner() override { Shutdown(); }

  void Start(const RunRequest& request, RunCallbacks callbacks) override {
    std::unique_lock lock(mu_);
    if (stopped_) {
      lock.unlock();
      RunResult r;
      r.status = Status(errc::kCancelled, "the http runner is shut down");
      callbacks.Done(std::move(r));
      return;
    }
    // Posted under the lock: Shutdown's cancel-all is queued after every accepted Start.
    net::post(io_, [this, request, callbacks = std::move(callbacks)]() mutable {
      Result<HttpSpec> spec = runners::ParseHttpSpec(*request.spec, options_.default_max_output,
                                                     options_.default_timeout);
      if (!spec.ok()) {
        RunResult r;
        r.status = spec.status();
        callbacks.Done(std::move(r));
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
  // The TLS context of every https connection, made at the first (it reads the trust
  // store). I/O thread only.
  Result<net::ssl::context*> TlsContext() {
    if (!tls_ && tls_error_.ok()) {
      Result<runners::SslCtxPtr> ctx = runners::NewTlsClientContext(options_.ca_file);
      if (ctx.ok()) {
        tls_.emplace(ctx->release());  // Asio's context owns it now
      } else {
        tls_error_ = ctx.status();
      }
    }
    if (!tls_) return tls_error_;
    return &*tls_;
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
  std::optional<net::ssl::context> tls_;                               // I/O thread only
  Status tls_error_;
};

void Call::Begin() {
  callbacks_.Started();
  if (done_) return;
  if (spec_.timeout.count() > 0) {
    deadline_.expires_after(std::chrono::milliseconds(spec_.timeout.count()));
    deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->done_) return;
      // The response is complete and only the TLS close is left: that is not late.
      if (self->result_) return self->Finish(std::move(*self->result_));
      RunResult r;
      r.status = Status(errc::kTimeout, self->Prefix() + ": no response within " +
                                            FormatDuration(self->spec_.timeout) +
                                            (self->handshaking_ ? " (TLS handshake)" : ""));
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
  tls_.reset();
  tcp_.reset();
  if (spec_.url.https) {
    Result<net::ssl::context*> ctx = runner_->TlsContext();
    if (!ctx.ok()) return Fail(ctx.status());
    tls_.emplace(io_, **ctx);
    Status prepared = runners::PrepareTlsClient(tls_->native_handle(), spec_.url.host);
    if (!prepared.ok()) return Fail(prepared);
  } else {
    tcp_.emplace(io_);
  }
  Tcp().async_connect(
      allowed, [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
        if (self->done_) return;
        if (ec) {
          return self->Fail(errc::kNetwork, "cannot connect to " + self->spec_.url.Authority() +
                                                ": " + ec.message());
        }
        if (self->tls_) return self->Handshake();
        self->Send();
      });
}

void Call::Handshake() {
  handshaking_ = true;
  tls_->async_handshake(
      net::ssl::stream_base::client, [self = shared_from_this()](beast::error_code ec) {
        if (self->done_) return;
        self->handshaking_ = false;
        if (ec) {
          return self->Fail(errc::kNetwork,
                            runners::TlsHandshakeFailure(self->tls_->native_handle(),
                                                         self->spec_.url.host, ec.message()));
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
    std::string lower = runners::AsciiLower(name);
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection")
      continue;
    request_.set(name, value);
  }
  if (spec_.has_body) request_.body() = spec_.body;
  request_.keep_alive(false);
  request_.prepare_payload();
  if (tls_) return Exchange(*tls_);
  Exchange(*tcp_);
}

// Writes request_ to `stream` and reads the response into parser_.
template <class Stream>
void Call::Exchange(Stream& stream) {
  http::async_write(stream, request_,
                    [self = shared_from_this(), &stream](beast::error_code ec, size_t) {
                      if (self->done_) return;
                      if (ec)
                        return self->Fail(errc::kNetwork, "sending the request: " + ec.message());
                      self->buffer_.clear();
                      self->parser_.emplace();
                      self->parser_->header_limit(64 * 1024);
                      self->parser_->body_limit(self->spec_.max_output);
                      if (self->spec_.method == "HEAD") self->parser_->skip(true);
                      http::async_read(stream, self->buffer_, *self->parser_,
                                       [self](beast::error_code rec, size_t) {
                                         if (!self->done_) self->OnResponse(rec);
                                       });
                    });
}

Json Call::ResponseJson(bool with_body) const {
  const auto& res = parser_->get();
  runners::HttpFields fields;
  for (const auto& field : res) fields.emplace_back(field.name_string(), field.value());
  return runners::ResponseOutput(static_cast<int>(res.result_int()), fields,
                                 with_body ? &res.body() : nullptr);
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
  if (ec == net::ssl::error::stream_truncated) {
    // The server closed the connection without close_notify before the response's end
    // (a body that runs to the close cannot be told from a cut one then).
    return Fail(errc::kNetwork, "reading the response: the TLS stream was truncated");
  }
  if (ec) return Fail(errc::kNetwork, "reading the response: " + ec.message());
  const auto& res = parser_->get();
  const int status = static_cast<int>(res.result_int());
  if (runners::IsRedirect(status) && spec_.max_redirects > 0) {
    std::optional<std::string> location;
    if (auto it = res.find(http::field::location); it != res.end()) {
      location = std::string(it->value());
    }
    runners::RedirectPlan plan =
        runners::PlanRedirect(spec_, redirects_, status, location ? &*location : nullptr);
    if (plan.kind == runners::RedirectPlan::kRefuse) {
      return Fail(errc::kHttpStatus, plan.message, ResponseJson(true), Json{{"status", status}});
    }
    if (plan.kind == runners::RedirectPlan::kFollow) {
      ++redirects_;
      return Close();  // then the next hop
    }
  }
  RunResult r;
  r.output = ResponseJson(true);
  if (!spec_.Accepts(status)) {
    r.status = Status(errc::kHttpStatus, Prefix() + " returned " + std::to_string(status));
    r.error_details = Json{{"status", status}};
  }
  result_ = std::move(r);
  Close();  // then Finish(result_)
}

// Ends this hop's connection, then AfterClose(). https sends close_notify and waits for
// the server's up to kTlsCloseWait (a close without it is fine: the response is whole).
void Call::Close() {
  if (!tls_) {
    CloseTcp();
    return AfterClose();
  }
  const int close = ++closes_;
  close_timer_.expires_after(kTlsCloseWait);
  close_timer_.async_wait([self = shared_from_this(), close](beast::error_code ec) {
    // Closing the socket ends the pending shutdown, whose handler goes on.
    if (!ec && !self->done_ && close == self->closes_) self->CloseTcp();
  });
  tls_->async_shutdown([self = shared_from_this()](beast::error_code) {
    if (self->done_) return;
    ++self->closes_;  // a timer handler already queued must not close the next hop
    self->close_timer_.cancel();
    self->CloseTcp();
    self->AfterClose();
  });
}

void Call::CloseTcp() {
  beast::error_code ignored;
  Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
  Tcp().socket().close(ignored);
}

void Call::AfterClose() {
  if (result_) return Finish(std::move(*result_));
  // Posted: the next hop replaces the stream, whose operation has not unwound yet.
  net::post(io_, [self = shared_from_this()] {
    if (!self->done_) self->StartHop();
  });
}

void Call::Finish(RunResult result) {
  if (done_) return;
  done_ = true;
  deadline_.cancel();
  close_timer_.cancel();
  resolver_.cancel();
  if (tcp_ || tls_) {
    beast::error_code ignored;
    Tcp().socket().close(ignored);
  }
  auto self = shared_from_this();  // the map may hold the last reference
  runner_->Forget(id_, this);
  callbacks_.Done(std::move(result));
}

}  // namespace

Result<HttpRunnerOptions> HttpRunnerOptionsFromEnv() {
  HttpRunnerOptions options;
  if (const char* allow = std::getenv("BATON_HTTP_ALLOW"); allow && *allow) {
    Result<std::vector<runners::Cidr>> cidrs = runners::ParseCidrList(allow);
    if (!cidrs.ok()) {
      return Status(errc::kValidation, "BATON_HTTP_ALLOW: " + cidrs.status().message());
    }
    options.allow = std::move(*cidrs);
  }
  if (const char* ca_file = std::getenv("BATON_CA_FILE"); ca_file && *ca_file) {
    Status checked = runners::CheckCaFile(ca_file);
    if (!checked.ok()) return Status(errc::kValidation, "BATON_CA_FILE: " + checked.message());
    options.ca_file = ca_file;
  }
  return options;
}

std::unique_ptr<Runner> NewHttpRunner(const HttpRunnerOptions& options) {
  return std::make_unique<HttpRunner>(options);
}

}  // namespace baton
