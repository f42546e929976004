// Accepts TCP connections and starts an HttpSession for each, on its own strand of the
// next I/O thread's context (io_pool.h).
// Past ServerLimits::max_connections, new connections get one 503 and are closed.
#pragma once

#include "server/http_session.h"
#include "server/io_pool.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <memory>

namespace baton::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // The acceptor runs on io.first(); each connection on io.next(). `io` outlives this.
  Listener(IoPool& io, std::shared_ptr<SessionShared> shared)
      : io_(io), acceptor_(io.first()), shared_(std::move(shared)) {}
  // Binds and listens; INVALID_ARGUMENT for a bad address, IO_ERROR when it is taken.
  Status Open(const boost::asio::ip::tcp::endpoint& endpoint);
  void Start();  // the accept loop
  void Close();  // thread-safe
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Accept();
  IoPool& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<SessionShared> shared_;
};

}  // namespace baton::server
