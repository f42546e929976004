// A WebSocket server on loopback for tests (Beast, synchronous): it accepts one
// connection and runs a test's script on it, on its own thread.
#pragma once

#include <fcntl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>

namespace baton::testing {

using Ws = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>;

// Accepts one WebSocket connection and runs `script` on it, on its own thread.
class WsServer {
 public:
  explicit WsServer(std::function<void(Ws&)> script)
      : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    // Not inherited by the processes a test starts: a worker holding the listening socket
    // would keep the port answering after this server is gone.
    fcntl(acceptor_.native_handle(), F_SETFD, FD_CLOEXEC);
    thread_ = std::thread([this, script = std::move(script)] {
      try {
        boost::asio::ip::tcp::socket socket(ioc_);
        acceptor_.accept(socket);
        Ws ws(std::move(socket));
        boost::beast::flat_buffer buffer;
        boost::beast::http::request<boost::beast::http::string_body> req;
        boost::beast::http::read(ws.next_layer(), buffer, req);
        target_ = std::string(req.target());
        authorization_ = std::string(req[boost::beast::http::field::authorization]);
        ws.accept(req);
        script(ws);
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    });
  }
  ~WsServer() { Join(); }
  // Waits for the script to end.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  // After Join().
  std::string target_, authorization_, error_;

 private:
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
};

// The next text frame.
inline std::string ReadText(Ws& ws) {
  boost::beast::flat_buffer buffer;
  ws.read(buffer);
  return boost::beast::buffers_to_string(buffer.data());
}

}  // namespace baton::testing
