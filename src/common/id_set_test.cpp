#include "common/id_set.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

namespace baton {
namespace {

struct Item {
  std::string id;
  int value = 0;
};
struct ItemId {
  std::string_view operator()(const Item& i) const { return i.id; }
};

// libstdc++ keeps a node's hash in the node only for a hash that may throw: the
// lookups of a large set must not hash every neighbour's id again.
static_assert(!std::is_nothrow_invocable_v<IdHash<std::unique_ptr<Item>, ItemId>,
                                           const std::unique_ptr<Item>&>);

TEST(IdSet, FindsAnOwnerByTheIdInsideItsObject) {
  IdSet<std::unique_ptr<Item>, ItemId> set;
  EXPECT_TRUE(set.insert(std::make_unique<Item>(Item{"ex1/download/1", 1})).second);
  EXPECT_TRUE(set.insert(std::make_unique<Item>(Item{"ex2/download/1", 2})).second);
  // The same id again is refused, as a map's key would be.
  EXPECT_FALSE(set.insert(std::make_unique<Item>(Item{"ex1/download/1", 3})).second);
  const std::string key = "ex2/download/1";
  auto it = set.find(key);
  ASSERT_NE(it, set.end());
  EXPECT_EQ((*it)->value, 2);
  (*it)->value = 20;  // the owner is const in the set, what it owns is not
  EXPECT_EQ((*set.find(std::string_view("ex2/download/1")))->value, 20);
  EXPECT_EQ(set.count("ex1/download/1"), 1u);
  EXPECT_EQ(set.find("ex3/download/1"), set.end());
  set.erase(set.find("ex1/download/1"));
  EXPECT_EQ(set.count("ex1/download/1"), 0u);
  EXPECT_EQ(set.size(), 1u);
}

TEST(IdSet, HoldsSharedOwners) {
  IdSet<std::shared_ptr<Item>, ItemId> set;
  auto item = std::make_shared<Item>(Item{"ex1", 7});
  set.insert(item);
  auto it = set.find("ex1");
  ASSERT_NE(it, set.end());
  EXPECT_EQ(*it, item);
  EXPECT_EQ(item.use_count(), 2);
}

}  // namespace
}  // namespace baton
