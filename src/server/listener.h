// Accepts TCP connections and starts an HttpSession for each, on its own strand.
// Past ServerLimits::max_connections, new connections get one 503 and are closed.
#pragma once

#include "server/http_session.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <memory>

namespace baton::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(boost::asio::io_context& ioc, std::shared_ptr<SessionShared> shared)
      : ioc_(ioc), acceptor_(ioc), shared_(std::move(shared)) {}
  // Binds and listens; INVALID_ARGUMENT for a bad address, IO_ERROR when it is taken.
  Status Open(const boost::asio::ip::tcp::endpoint& endpoint);
  void Start();  // the accept loop
  void Close();  // thread-safe
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Accept();
  boost::asio::io_context& ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<SessionShared> shared_;
};

}  // namespace baton::server
