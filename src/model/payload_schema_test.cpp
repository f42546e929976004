#include "model/payload_schema.h"

#include <gtest/gtest.h>

namespace baton::model {
namespace {

const Json kApproval = Json::parse(R"({
  "type": "object",
  "required": ["approved", "by"],
  "additionalProperties": false,
  "properties": {
    "approved": {"type": "boolean"},
    "by": {"type": "string", "minLength": 1, "maxLength": 64},
    "env": {"enum": ["staging", "production"]},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
    "hosts": {"type": "array", "maxItems": 2, "items": {"type": "string"}}
  }
})");

TEST(PayloadSchema, AValidDefinitionChecksClean) {
  EXPECT_EQ(CheckPayloadSchema(kApproval), "");
  EXPECT_EQ(CheckPayloadSchema(Json::parse(R"({"type": ["string", "null"]})")), "");
}

TEST(PayloadSchema, DefinitionErrorsNameTheirPlace) {
  EXPECT_EQ(CheckPayloadSchema(Json("object")), "/: a schema is an object");
  EXPECT_EQ(CheckPayloadSchema(Json::parse(R"({"properties": {"a/b": {"type": 3}}})")),
            "/properties/a~1b/type: unknown type 3 (object, array, string, number, integer, "
            "boolean, null)");
  EXPECT_EQ(CheckPayloadSchema(Json::parse(R"({"required": "a"})")),
            "/required: expected a list of property names");
  EXPECT_EQ(CheckPayloadSchema(Json::parse(R"({"minLength": -1})")),
            "/minLength: expected a non-negative integer");
  EXPECT_EQ(CheckPayloadSchema(Json::parse(R"({"items": {"enum": []}})")),
            "/items/enum: expected a non-empty list");
}

TEST(PayloadSchema, AMatchingPayloadPasses) {
  EXPECT_EQ(MatchPayloadSchema(kApproval, Json::parse(R"({"approved": true, "by": "ana",
      "env": "production", "replicas": 3.0, "hosts": ["a", "b"]})")),
            "");
}

TEST(PayloadSchema, MismatchesNameThePlaceInThePayload) {
  auto match = [](const char* payload) {
    return MatchPayloadSchema(kApproval, Json::parse(payload));
  };
  EXPECT_EQ(match("[]"), "payload: expected object, got array");
  EXPECT_EQ(match(R"({"approved": true})"), "payload: missing required property 'by'");
  EXPECT_EQ(match(R"({"approved": 1, "by": "a"})"), "/approved: expected boolean, got integer");
  EXPECT_EQ(match(R"({"approved": true, "by": ""})"), "/by: shorter than 1 bytes");
  EXPECT_EQ(match(R"({"approved": true, "by": "a", "env": "dev"})"),
            R"(/env: "dev" is not one of ["staging","production"])");
  EXPECT_EQ(match(R"({"approved": true, "by": "a", "replicas": 2.5})"),
            "/replicas: expected integer, got number");
  EXPECT_EQ(match(R"({"approved": true, "by": "a", "replicas": 11})"),
            "/replicas: above the maximum 10");
  EXPECT_EQ(match(R"({"approved": true, "by": "a", "hosts": ["a", 2]})"),
            "/hosts/1: expected string, got integer");
  EXPECT_EQ(match(R"({"approved": true, "by": "a", "hosts": ["a", "b", "c"]})"),
            "/hosts: more than 2 items");
  EXPECT_EQ(match(R"({"approved": true, "by": "a", "extra": 1})"),
            "/extra: unexpected property (additionalProperties is false)");
}

}  // namespace
}  // namespace baton::model
