// Webhooks, event triggers and notifications through the real server: signatures,
// deduplication, trigger chains and cycles, notification retries against a local
// receiver, the egress guard, redelivery, and pending deliveries surviving SIGKILL.
#include "server/auth.h"
#include "support/http_receiver.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

namespace baton {
namespace {

using client::ApiClient;
using testing::HttpReceiver;
using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

class ServerTriggers : public ::testing::Test {
 protected:
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Notifications go to a receiver on loopback: the egress guard must allow it; retries
  // are quick so the test does not wait seconds.
  void Start() {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(
        dir_, std::vector<std::string>{"--delivery-retry", "50ms", "--delivery-attempts", "4"},
        std::vector<std::string>{"BATON_HTTP_ALLOW=127.0.0.0/8"});
    ASSERT_TRUE(server_->ok()) << server_->log();
  }
  ApiClient Admin() { return server_->Admin(); }
  void CreateWorkflow(const std::string& yaml) {
    auto r = Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->status == 201 || r->status == 200) << r->body;
  }
  Json Get(const std::string& target) {
    auto r = Admin().Call("GET", target);
    EXPECT_TRUE(r.ok()) << target << ": " << r.status().ToString();
    return r.ok() ? *r : Json();
  }
  Json WaitForStatus(const std::string& id, const std::string& status) {
    return testing::WaitForExecutionStatus(Admin(), id, status);
  }
  // The deliveries of one execution once none is pending.
  Json SettledDeliveries(const std::string& execution_id, size_t count) {
    Json d;
    EXPECT_TRUE(WaitUntil([&] {
      d = Get("/api/v1/deliveries?execution=" + execution_id)["deliveries"];
      if (d.size() != count) return false;
      for (const Json& x : d) {
        if (x["status"] == "pending") return false;
      }
      return true;
    })) << d.dump();
    return d;
  }
  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

std::string Now() {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

// The signature headers of a webhook call: X-Baton-Timestamp and the HMAC of
// "<timestamp>.<body>".
std::map<std::string, std::string> Sign(const std::string& secret, const std::string& body,
                                        const std::string& stamp = Now()) {
  return {{"X-Baton-Timestamp", stamp},
          {"X-Baton-Signature", "sha256=" + server::HmacSha256Hex(secret, stamp + "." + body)}};
}

std::map<std::string, std::string> With(std::map<std::string, std::string> headers,
                                        const std::string& name, const std::string& value) {
  headers[name] = value;
  return headers;
}

TEST_F(ServerTriggers, WebhookStartsItsWorkflowOnlyWithAGoodSignature) {
  Start();
  CreateWorkflow(
      "name: greet\ninputs: {who: {type: string, required: true}}\n"
      "steps:\n  - {id: a, type: noop, with: {hi: '{{ inputs.who }}'}}\n");
  auto created =
      Admin().Call("POST", "/api/v1/hooks", {{"name", "gh-push"}, {"workflow", "greet"}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string secret = (*created)["secret"];
  EXPECT_EQ((*created)["url"], "/api/v1/hooks/gh-push");
  EXPECT_FALSE(Get("/api/v1/hooks")["hooks"][0].contains("secret"));  // shown once

  ApiClient anyone = server_->As("");  // a webhook caller has no bearer token
  const std::string body = R"({"who": "octocat"})";
  auto call = [&](const std::string& payload, std::map<std::string, std::string> headers) {
    auto r = anyone.Send("POST", "/api/v1/hooks/gh-push", payload, "application/json", headers);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : client::HttpReply{};
  };
  EXPECT_EQ(call(body, {}).status, 401);  // unsigned
  auto forged = call(body, Sign("not-the-secret", body));
  EXPECT_EQ(forged.status, 401);
  EXPECT_NE(forged.body.find("does not match"), std::string::npos) << forged.body;
  // A good signature over another body does not cover this one.
  EXPECT_EQ(call(body, Sign(secret, R"({"who": "x"})")).status, 401);
  // Regression (issue 11, defect 9): a captured call could be replayed forever. The
  // timestamp is signed with the body and must be within 300 s of the server's clock.
  const std::string old = std::to_string(std::stoll(Now()) - 3600);
  auto replayed = call(body, Sign(secret, body, old));
  EXPECT_EQ(replayed.status, 401);
  EXPECT_NE(replayed.body.find("within 300 s"), std::string::npos) << replayed.body;
  auto restamped = call(body, With(Sign(secret, body, old), "X-Baton-Timestamp", Now()));
  EXPECT_EQ(restamped.status, 401) << restamped.body;  // the stamp is under the signature
  auto no_stamp = Sign(secret, body);
  no_stamp.erase("X-Baton-Timestamp");
  EXPECT_EQ(call(body, no_stamp).status, 401);
  EXPECT_EQ(anyone.Send("POST", "/api/v1/hooks/nope", body)->status, 404);
  EXPECT_TRUE(Get("/api/v1/executions")["executions"].empty());  // nothing started

  auto good = call(body, With(Sign(secret, body), "X-Baton-Delivery", "d-1"));
  ASSERT_EQ(good.status, 202) << good.body;
  Json started = Json::parse(good.body);
  EXPECT_EQ(started["created"], true);
  EXPECT_EQ(started["hook"], "gh-push");
  Json e = WaitForStatus(started["id"], "completed");
  EXPECT_EQ(e["steps"][0]["output"]["hi"], "octocat");

  // The same delivery again: the first execution, nothing new.
  auto repeat = call(body, With(Sign(secret, body), "X-Baton-Delivery", "d-1"));
  EXPECT_EQ(repeat.status, 200) << repeat.body;
  EXPECT_EQ(Json::parse(repeat.body)["id"], started["id"]);
  EXPECT_EQ(Get("/api/v1/executions")["executions"].size(), 1u);

  // Signed, but not what the workflow takes: 400 naming the input.
  const std::string wrong = R"({"whom": 1})";
  auto refused = call(wrong, Sign(secret, wrong));
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("who"), std::string::npos) << refused.body;
  const std::string junk = "{not json";
  EXPECT_EQ(call(junk, Sign(secret, junk)).status, 400);

  // Another namespace neither sees nor deletes it; its owner does.
  auto other = Admin().Call("POST", "/api/v1/tokens",
                            {{"name", "b"}, {"scopes", {"write"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok());
  ApiClient b = server_->As((*other)["token"]);
  EXPECT_TRUE((*b.Call("GET", "/api/v1/hooks"))["hooks"].empty());
  EXPECT_EQ(b.Send("DELETE", "/api/v1/hooks/gh-push")->status, 404);
  EXPECT_EQ(b.Send("POST", "/api/v1/hooks", Json({{"name", "gh-push"}, {"workflow", "x"}}).dump())
                ->status,
            404);  // team-b has no workflow x
  EXPECT_EQ(
      Admin()
          .Send("POST", "/api/v1/hooks", Json({{"name", "gh-push"}, {"workflow", "greet"}}).dump())
          ->status,
      409);
  EXPECT_EQ(Admin().Send("DELETE", "/api/v1/hooks/gh-push")->status, 204);
  EXPECT_EQ(call(body, Sign(secret, body)).status, 404);
}

TEST_F(ServerTriggers, NotificationsAreRetriedUntilTheReceiverTakesThem) {
  HttpReceiver receiver({500, 503});  // two failures, then 200
  Start();
  CreateWorkflow("name: notified\nnotify:\n  - {url: '" + receiver.Url("/done") +
                 "', events: [execution.completed]}\n  - {url: '" + receiver.Url("/failed") +
                 "', events: [execution.failed]}\nsteps:\n  - {id: a, type: noop}\n");
  auto submitted = Admin().Call("POST", "/api/v1/executions", {{"workflow", "notified"}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const std::string id = (*submitted)["id"];
  WaitForStatus(id, "completed");
  Json d = SettledDeliveries(id, 1);  // only the completed entry matched
  EXPECT_EQ(d[0]["status"], "delivered") << d.dump();
  EXPECT_EQ(d[0]["attempts"], 3);
  EXPECT_EQ(d[0]["kind"], "notification");
  EXPECT_EQ(d[0]["event"], "execution.completed");
  EXPECT_EQ(d[0]["url"], receiver.Url("/done"));
  EXPECT_TRUE(d[0]["last_error"].is_null());

  auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/done");
    EXPECT_EQ(r.Header("x-baton-event"), "execution.completed");
    EXPECT_EQ(r.Header("x-baton-delivery"), d[0]["id"]);  // the same id on every attempt
    Json body = Json::parse(r.body);
    EXPECT_EQ(body["event"], "execution.completed");
    EXPECT_EQ(body["execution"]["id"], id);
    EXPECT_EQ(body["execution"]["status"], "completed");
  }
  EXPECT_EQ(Get("/api/v1/deliveries?status=delivered")["deliveries"].size(), 1u);
  EXPECT_TRUE(WaitUntil([&] {  // metrics are refreshed every 500 ms
    auto m = Admin().Send("GET", "/metrics");
    return m.ok() &&
           m->body.find("baton_deliveries_total{outcome=\"delivered\"} 1") != std::string::npos &&
           m->body.find("baton_deliveries_total{outcome=\"retried\"} 2") != std::string::npos;
  }));
  EXPECT_EQ(Admin().Send("GET", "/api/v1/deliveries?status=lost")->status, 400);
}

TEST_F(ServerTriggers, FailedNotificationsGiveUpAndCanBeRedelivered) {
  HttpReceiver receiver({404});  // a client error is not retried
  Start();
  CreateWorkflow("name: n\nnotify:\n  - {url: '" + receiver.Url("/gone") +
                 "'}\n  - {url: 'http://169.254.169.254/latest/meta-data'}\n"
                 "steps:\n  - {id: a, type: noop}\n");
  auto submitted = Admin().Call("POST", "/api/v1/executions", {{"workflow", "n"}});
  ASSERT_TRUE(submitted.ok());
  const std::string id = (*submitted)["id"];
  Json d = SettledDeliveries(id, 2);
  Json gone = d[0]["url"] == receiver.Url("/gone") ? d[0] : d[1];
  Json metadata = d[0]["url"] == receiver.Url("/gone") ? d[1] : d[0];
  EXPECT_EQ(gone["status"], "failed");
  EXPECT_EQ(gone["attempts"], 1);
  EXPECT_EQ(gone["last_error"]["http_status"], 404);
  // The egress guard refuses the metadata address: no request, no retry.
  EXPECT_EQ(metadata["status"], "failed");
  EXPECT_EQ(metadata["attempts"], 1);
  EXPECT_NE(metadata["last_error"]["message"].get<std::string>().find("egress guard"),
            std::string::npos)
      << metadata.dump();
  EXPECT_EQ(receiver.requests().size(), 1u);

  // Redelivery: the receiver now answers 200.
  auto again =
      Admin().Call("POST", "/api/v1/deliveries/" + gone["id"].get<std::string>() + "/redeliver");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)["status"], "pending");
  ASSERT_TRUE(WaitUntil([&] {
    return Get("/api/v1/deliveries/" + gone["id"].get<std::string>())["status"] == "delivered";
  }));
  EXPECT_EQ(receiver.requests().size(), 2u);
  // Only failed deliveries are redelivered.
  EXPECT_EQ(Admin()
                .Send("POST", "/api/v1/deliveries/" + gone["id"].get<std::string>() + "/redeliver")
                ->status,
            409);
}

TEST_F(ServerTriggers, AFinishedExecutionStartsTheTriggeredWorkflow) {
  Start();
  CreateWorkflow(
      "name: train\ninputs: {model: {type: string, default: m0}}\n"
      "steps:\n  - {id: fit, type: noop, with: {score: 0.93}}\n"
      "output: {score: '{{ steps.fit.output.score }}'}\n");
  CreateWorkflow(
      "name: evaluate\ninputs: {model: {type: string, required: true}, score: {type: number}}\n"
      "steps:\n  - {id: check, type: noop}\n");
  CreateWorkflow("name: cleanup\nsteps:\n  - {id: rm, type: noop}\n");
  auto trigger = Admin().Call(
      "POST", "/api/v1/triggers",
      {{"name", "after-train"},
       {"source", "train"},
       {"on", {"completed"}},
       {"workflow", "evaluate"},
       {"input", {{"model", "{{ source.input.model }}"}, {"score", "{{ source.output.score }}"}}}});
  ASSERT_TRUE(trigger.ok()) << trigger.status().ToString();
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), testing::BatonBin());
    args.insert(args.end(), {"--server", server_->url(), "--token", server_->admin_token()});
    return testing::RunProcess(args);
  };
  auto made = cli({"trigger", "create", "--name", "on-failure", "--source", "train", "--on",
                   "failed,timeout", "--workflow", "cleanup"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto listed = cli({"trigger", "list"});
  EXPECT_NE(listed.out.find("on failed,timeout"), std::string::npos) << listed.out;
  // evaluate -> train would loop forever.
  auto cycle = Admin().Send(
      "POST", "/api/v1/triggers",
      Json({{"name", "loop"}, {"source", "evaluate"}, {"on", {"completed"}}, {"workflow", "train"}})
          .dump());
  EXPECT_EQ(cycle->status, 400) << cycle->body;
  EXPECT_NE(cycle->body.find("cycle: evaluate -> train -> evaluate"), std::string::npos)
      << cycle->body;
  auto bad_ref = Admin().Send("POST", "/api/v1/triggers",
                              Json({{"name", "x"},
                                    {"source", "train"},
                                    {"on", {"completed"}},
                                    {"workflow", "cleanup"},
                                    {"input", {{"a", "{{ inputs.model }}"}}}})
                                  .dump());
  EXPECT_EQ(bad_ref->status, 400) << bad_ref->body;
  EXPECT_EQ(Admin()
                .Send("POST", "/api/v1/triggers",
                      Json({{"name", "x"},
                            {"source", "train"},
                            {"on", {"running"}},
                            {"workflow", "cleanup"}})
                          .dump())
                ->status,
            400);

  auto submitted = Admin().Call("POST", "/api/v1/executions",
                                {{"workflow", "train"}, {"input", {{"model", "m7"}}}});
  ASSERT_TRUE(submitted.ok());
  const std::string id = (*submitted)["id"];
  Json d = SettledDeliveries(id, 1);  // only the on-completed trigger
  EXPECT_EQ(d[0]["kind"], "trigger");
  EXPECT_EQ(d[0]["status"], "delivered") << d.dump();
  EXPECT_EQ(d[0]["trigger_id"], (*trigger)["id"]);
  const std::string started = d[0]["started_execution_id"];
  Json e = WaitForStatus(started, "completed");
  auto deliveries = cli({"delivery", "list", "--execution", id});
  EXPECT_NE(deliveries.out.find("delivered"), std::string::npos) << deliveries.out;
  EXPECT_EQ(e["workflow"], "evaluate");
  EXPECT_EQ(e["input"]["model"], "m7");
  EXPECT_EQ(e["input"]["score"], 0.93);
  EXPECT_EQ(Get("/api/v1/executions?workflow=evaluate")["executions"].size(), 1u);
  EXPECT_TRUE(Get("/api/v1/executions?workflow=cleanup")["executions"].empty());

  // Deleted, it starts nothing more.
  EXPECT_EQ(
      Admin().Send("DELETE", "/api/v1/triggers/" + (*trigger)["id"].get<std::string>())->status,
      204);
  auto second = Admin().Call("POST", "/api/v1/executions", {{"workflow", "train"}});
  ASSERT_TRUE(second.ok());
  WaitForStatus((*second)["id"], "completed");
  EXPECT_TRUE(
      Get("/api/v1/deliveries?execution=" + (*second)["id"].get<std::string>())["deliveries"]
          .empty());
}

TEST_F(ServerTriggers, PendingDeliveriesSurviveSigkill) {
  HttpReceiver receiver({503});
  dir_ = MakeTempDir();
  // Slow retries: the kill comes while the second attempt is still waiting.
  server_ =
      std::make_unique<ServerProcess>(dir_, std::vector<std::string>{"--delivery-retry", "1s"},
                                      std::vector<std::string>{"BATON_HTTP_ALLOW=127.0.0.0/8"});
  ASSERT_TRUE(server_->ok()) << server_->log();
  CreateWorkflow("name: n\nnotify: [{url: '" + receiver.Url("/x") +
                 "'}]\nsteps:\n  - {id: a, type: noop}\n");
  auto submitted = Admin().Call("POST", "/api/v1/executions", {{"workflow", "n"}});
  ASSERT_TRUE(submitted.ok());
  const std::string id = (*submitted)["id"];
  ASSERT_TRUE(receiver.WaitForRequests(1));
  Json d;
  ASSERT_TRUE(WaitUntil([&] {  // the failed attempt is stored
    d = Get("/api/v1/deliveries?execution=" + id)["deliveries"];
    return d.size() == 1 && d[0]["attempts"] == 1;
  }));
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  d = SettledDeliveries(id, 1);
  EXPECT_EQ(d[0]["status"], "delivered") << d.dump();
  EXPECT_EQ(d[0]["attempts"], 2);
  EXPECT_EQ(receiver.requests().size(), 2u);
}

}  // namespace
}  // namespace baton
