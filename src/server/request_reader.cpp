#include "server/request_reader.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include <cctype>

namespace baton::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

bool ToHttpRequest(BeastRequest& msg, HttpRequest* out, HttpResponse* refusal) {
  std::string_view target = msg.target();
  const size_t q = target.find('?');
  out->method = std::string(msg.method_string());
  if (!PercentDecode(target.substr(0, q), &out->path, false) ||
      (q != std::string_view::npos && !ParseQuery(target.substr(q + 1), &out->query))) {
    *refusal = ErrorResponse(400, "BAD_REQUEST", "malformed percent-encoding in the URL");
    return false;
  }
  for (const auto& field : msg) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out->headers[name] = std::string(field.value());
  }
  out->body = std::move(msg.body());
  return true;
}

HttpResponse BodyTooLarge(const ServerLimits& limits) {
  return ErrorResponse(413, "PAYLOAD_TOO_LARGE",
                       "request body exceeds " + std::to_string(limits.max_body_bytes) +
                           " bytes (server --max-body)",
                       {{"limit", limits.max_body_bytes}});
}

std::optional<HttpResponse> ReadErrorResponse(const beast::error_code& ec,
                                              const ServerLimits& limits) {
  if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset ||
      ec == net::error::eof) {
    return std::nullopt;
  }
  if (ec == http::error::body_limit) return BodyTooLarge(limits);
  if (ec == http::error::header_limit) {
    return ErrorResponse(
        431, "HEADER_TOO_LARGE",
        "request headers exceed " + std::to_string(limits.max_header_bytes) + " bytes");
  }
  return ErrorResponse(400, "BAD_REQUEST", "malformed HTTP request: " + ec.message());
}

RequestFromBytes ReadRequestFromBytes(std::string_view bytes, const ServerLimits& limits) {
  RequestFromBytes out;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(limits.max_header_bytes));
  parser.body_limit(limits.max_body_bytes);
  beast::error_code ec;
  bool checked_length = false;
  while (!parser.is_done()) {
    if (parser.is_header_done() && !checked_length) {
      checked_length = true;
      if (auto len = parser.content_length(); len && *len > limits.max_body_bytes) {
        out.refusal = BodyTooLarge(limits);
        return out;
      }
    }
    if (bytes.empty()) {
      if (!parser.got_some()) {  // closed before a byte: nothing to answer
        ec = http::error::end_of_stream;
        break;
      }
      parser.put_eof(ec);  // the client closed: a request cut short is an error
      if (!ec && !parser.is_done()) ec = http::error::partial_message;
      break;
    }
    const size_t used = parser.put(net::buffer(bytes.data(), bytes.size()), ec);
    bytes.remove_prefix(used);
    if (ec == http::error::need_more) {
      ec = {};
      if (used == 0) bytes = {};  // no more will come: what is left is cut short
      continue;
    }
    if (ec) break;
  }
  if (ec) {
    out.refusal = ReadErrorResponse(ec, limits);
    return out;
  }
  BeastRequest msg = parser.release();
  HttpRequest request;
  HttpResponse refusal;
  if (!ToHttpRequest(msg, &request, &refusal)) {
    out.refusal = std::move(refusal);
    return out;
  }
  out.request = std::move(request);
  return out;
}

}  // namespace baton::server
