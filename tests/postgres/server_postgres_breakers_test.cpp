// Circuit breakers with several instances on one database: a breaker that one instance's
// failures opened fails steps fast on the other instances too, within a lease keeper's
// turn (a quarter lease), and a reset on one closes it on the others.
#include "postgres/instances.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::testing {
namespace {

// `load` appends a line to `runs` each time it really runs and fails (exit 3). Its
// breaker, "warehouse", opens after two failures.
std::string Ingest(const std::string& dir) {
  return "name: ingest\nsteps:\n"
         "  - id: load\n"
         "    type: shell\n"
         "    run: ['sh', '-c', 'echo run >> \"$0/runs\"; exit 3', '" +
         dir +
         "']\n"
         "    circuit_breaker: {key: warehouse, failure_threshold: 2, recovery_timeout: 1h}\n";
}

// The state of breaker "warehouse" as instance `api` shows it ("" when it has none).
std::string WarehouseState(const client::ApiClient& api) {
  auto list = api.Call("GET", "/api/v1/breakers");
  if (!list.ok()) return "";
  for (const Json& b : (*list)["breakers"]) {
    if (b["key"] == "warehouse") return b["state"];
  }
  return "";
}

TEST(PostgresBreakers, ABreakerOneInstanceOpenedFailsStepsFastOnTheOthers) {
  Instances in;
  in.Start(2, "1s");
  const std::string dir = MakeTempDir();
  auto created = in.Api(0).Send("POST", "/api/v1/workflows", Ingest(dir), "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201);
  for (int i = 0; i < 2; ++i) {
    const std::string id = in.Submit(0, "ingest");
    ASSERT_FALSE(id.empty());
    WaitForExecutionStatus(in.Api(0), id, "failed");
  }
  ASSERT_EQ(Runs(dir), 2);
  ASSERT_EQ(WarehouseState(in.Api(0)), "open");
  // i2 never ran the step; it learns of the breaker from the database.
  EXPECT_TRUE(WaitUntil([&] { return WarehouseState(in.Api(1)) == "open"; }, 10'000))
      << "i2 shows breaker warehouse as '" << WarehouseState(in.Api(1)) << "'";
  const std::string fast = in.Submit(1, "ingest");
  ASSERT_FALSE(fast.empty());
  WaitForExecutionStatus(in.Api(1), fast, "failed");
  EXPECT_EQ(Runs(dir), 2);  // failed fast: the shell never ran
  auto detail = in.Api(1).Call("GET", "/api/v1/executions/" + fast);
  ASSERT_TRUE(detail.ok());
  EXPECT_EQ((*detail)["steps"][0]["error"]["code"], "CIRCUIT_OPEN") << detail->dump();
  // Reset through i2: closed there at once, and on i1 within a turn.
  auto reset = in.Api(1).Send("POST", "/api/v1/breakers/warehouse/reset", "");
  ASSERT_TRUE(reset.ok());
  ASSERT_EQ(reset->status, 200) << reset->body;
  EXPECT_EQ(WarehouseState(in.Api(1)), "closed");
  EXPECT_TRUE(WaitUntil([&] { return WarehouseState(in.Api(0)) == "closed"; }, 10'000))
      << "i1 shows breaker warehouse as '" << WarehouseState(in.Api(0)) << "'";
  const std::string again = in.Submit(0, "ingest");
  WaitForExecutionStatus(in.Api(0), again, "failed");
  EXPECT_EQ(Runs(dir), 3);  // closed: it runs again
}

}  // namespace
}  // namespace baton::testing
