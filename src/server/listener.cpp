#include "server/listener.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace baton::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

Status Listener::Open(const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(errc::kIo, "cannot listen on " + endpoint.address().to_string() + ":" +
                                 std::to_string(endpoint.port()) + ": " + ec.message());
  }
  return Status::Ok();
}

void Listener::Start() {
  Accept();
}

void Listener::Close() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ec;
    self->acceptor_.close(ec);
  });
}

void Listener::Accept() {
  acceptor_.async_accept(
      net::make_strand(io_.next()),
      [self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
        if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
        if (!ec) {
          s.set_option(tcp::no_delay(true), ec);
          const bool reject =
              self->shared_->connections.load() >= self->shared_->limits.max_connections;
          StartHttpSession(std::move(s), self->shared_, reject);
        }
        self->Accept();  // on errors too (EMFILE passes; the next accept may work)
      });
}

}  // namespace baton::server
