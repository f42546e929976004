// WebSocketConnection against a Beast WebSocket server on loopback, and refused upgrades
// from the plain test HTTP server.
#include "worker/websocket_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "support/http_test_server.h"
#include "support/websocket_test_server.h"
#include "worker/fake_server.h"

namespace baton::worker {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using namespace std::chrono_literals;
using baton::testing::ReadText;
using baton::testing::Ws;
using baton::testing::WsServer;

TEST(WebSocketConnection, ExchangesMessagesSkipsBadOnesAndSeesTheClose) {
  std::promise<void> may_close;
  std::vector<std::string> from_worker;
  WsServer server([&](Ws& ws) {
    from_worker.push_back(ReadText(ws));
    ws.text(true);
    ws.write(net::buffer(std::string("{not json")));
    ws.write(net::buffer(std::string(R"({"type": "heartbeat"})")));  // not a server message
    ws.write(net::buffer(std::string(
        R"({"type": "registered", "workerId": "w1", "heartbeatInterval": 10, "heartbeatTimeout": 20})")));
    from_worker.push_back(ReadText(ws));
    may_close.get_future().wait_for(testing::kWait);
    ws.close(websocket::close_reason(websocket::close_code::going_away, "bye"));
  });
  testing::LogRecorder log;
  WebSocketOptions options;
  options.log = log.Sink();
  auto conn = OpenWebSocketConnection({server.url(), "bt_secret"}, options);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  Connection& c = **conn;

  protocol::Register reg;
  reg.worker_id = "w1";
  reg.node_id = "w1";
  reg.capacity = 2;
  reg.commands = {"x"};
  ASSERT_TRUE(c.Send(reg).ok());
  auto got = c.Receive(testing::kWait);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(std::get<protocol::Registered>(**got), (protocol::Registered{"w1", 10, 20}));
  EXPECT_EQ(log.CountOf("ignoring a message from the server: message: not valid JSON"), 1u);
  EXPECT_EQ(log.CountOf("\"heartbeat\" is not a message from the server"), 1u);

  // Nothing comes: a timeout, and an interrupted wait returns at once.
  got = c.Receive(20ms);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  c.Interrupt();
  auto start = std::chrono::steady_clock::now();
  got = c.Receive(testing::kWait);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, testing::kWait / 2);

  ASSERT_TRUE(c.Send(protocol::Heartbeat{1, 2, protocol::WorkerStatus::kOnline}).ok());
  may_close.set_value();
  got = c.Receive(testing::kWait);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "the server closed the connection (code 1001: bye)");
  EXPECT_FALSE(c.Send(protocol::Deregister{}).ok());
  c.Close();

  server.Join();
  EXPECT_EQ(server.error_, "");
  EXPECT_EQ(server.target_, "/api/v1/workers/connect");
  EXPECT_EQ(server.authorization_, "Bearer bt_secret");
  ASSERT_EQ(from_worker.size(), 2u);
  EXPECT_EQ(protocol::ParseWorkerMessageText(from_worker[0]).value(), protocol::WorkerMessage(reg));
  EXPECT_EQ(
      Json::parse(from_worker[1]),
      Json::parse(R"({"type": "heartbeat", "currentLoad": 1, "capacity": 2, "status": "ONLINE"})"));
}

TEST(WebSocketConnection, BatchFramesArriveOneMessageAtATimeAndGoOutWhole) {
  std::vector<std::string> from_worker;
  WsServer server([&](Ws& ws) {
    ws.text(true);
    ws.write(net::buffer(
        std::string(R"({"type": "batch", "messages": [)"
                    R"({"type": "command.cancel", "assignmentId": "a1", "reason": "r1"},)"
                    R"({"type": "command.cancel", "assignmentId": "a2"}]})")));
    ws.write(net::buffer(std::string(  // refused whole
        R"({"type": "batch", "messages": [{"type": "command.cancel", "assignmentId": "a3"}, 7]})")));
    ws.write(net::buffer(std::string(R"({"type": "command.cancel", "assignmentId": "a4"})")));
    from_worker.push_back(ReadText(ws));
  });
  testing::LogRecorder log;
  WebSocketOptions options;
  options.log = log.Sink();
  auto conn = OpenWebSocketConnection({server.url(), "t"}, options);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  Connection& c = **conn;
  std::vector<std::string> cancelled;
  while (cancelled.size() < 3) {
    auto got = c.Receive(testing::kWait);
    ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
    cancelled.push_back(std::get<protocol::CommandCancel>(**got).assignment_id);
  }
  EXPECT_EQ(cancelled, (std::vector<std::string>{"a1", "a2", "a4"}));
  EXPECT_EQ(log.CountOf("batch: field 'messages[1]'"), 1u);

  std::vector<protocol::WorkerMessage> several = {
      protocol::CommandAck{"a1", protocol::AckStatus::kAccepted, std::nullopt},
      protocol::CommandResult::Success("a1", Json{{"ok", true}})};
  ASSERT_TRUE(c.SendBatch(several).ok());
  c.Close();
  server.Join();
  EXPECT_EQ(server.error_, "");
  ASSERT_EQ(from_worker.size(), 1u);  // one frame
  auto frame = protocol::ParseWorkerFrameText(from_worker[0]);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(*frame, several);
}

TEST(WebSocketConnection, CloseIsACleanWebSocketClose) {
  beast::error_code seen;
  WsServer server([&](Ws& ws) {
    beast::flat_buffer buffer;
    ws.read(buffer, seen);
  });
  auto conn = OpenWebSocketConnection({server.url(), ""}, {});
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  (*conn)->Close();
  (*conn)->Close();  // idempotent
  server.Join();
  EXPECT_EQ(seen, websocket::error::closed);
  EXPECT_EQ(server.authorization_, "");  // no token: no header
  EXPECT_FALSE((*conn)->Receive(1ms).ok());
}

TEST(WebSocketConnection, ARefusedUpgradeCarriesTheServersError) {
  struct Case {
    int status;
    const char* body;
    const char* code;
    bool fatal;
  };
  const std::vector<Case> cases = {
      {401, R"({"error": {"code": "UNAUTHORIZED", "message": "a valid bearer token is required"}})",
       kUnauthorized, true},
      {403, R"({"error": {"code": "FORBIDDEN", "message": "this token lacks the 'worker' scope"}})",
       kForbidden, true},
      {404, R"({"error": {"code": "NOT_FOUND", "message": "no such route"}})", "NOT_FOUND", false},
      {503, "overloaded", "HTTP_503", false},
  };
  for (const Case& c : cases) {
    baton::testing::TestServer http([&](const baton::testing::Received&) {
      return baton::testing::Response(c.status, c.body);
    });
    auto conn = OpenWebSocketConnection({http.Url(""), "bt_x"}, {});
    ASSERT_FALSE(conn.ok()) << c.status;
    EXPECT_EQ(conn.status().code(), c.code);
    EXPECT_EQ(IsFatalConnectError(conn.status()), c.fatal);
    std::string message = conn.status().message();
    EXPECT_NE(message.find("(HTTP " + std::to_string(c.status) + ")"), std::string::npos)
        << message;
    Json body = Json::parse(c.body, nullptr, false);
    std::string expected = body.is_object() ? body["error"]["message"].get<std::string>() : c.body;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    ASSERT_EQ(http.requests().size(), 1u);
    EXPECT_EQ(http.requests()[0].target, "/api/v1/workers/connect");
    EXPECT_EQ(http.requests()[0].Header("authorization"), "Bearer bt_x");
  }
}

TEST(WebSocketConnection, AnUnreachableServerIsARetryableError) {
  std::string url;
  {
    WsServer gone([](Ws&) {});
    url = gone.url();
    auto first = OpenWebSocketConnection({url, ""}, {});  // lets the server's script end
    ASSERT_TRUE(first.ok());
  }
  auto conn = OpenWebSocketConnection({url, ""}, {});
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), errc::kIo);
  EXPECT_FALSE(IsFatalConnectError(conn.status()));
  EXPECT_NE(conn.status().message().find("cannot reach the Baton server at " + url),
            std::string::npos)
      << conn.status().message();
  EXPECT_EQ(OpenWebSocketConnection({"https://x", ""}, {}).status().code(), errc::kInvalidArgument);
}

}  // namespace
}  // namespace baton::worker
