// The API's OpenAPI 3.1 document (GET /api/v1/openapi.json): the router's routes, each
// described by the operation table (openapi_operations.cpp: its operationId, query
// parameters, request and response schemas) with the schemas of openapi_schemas.cpp.
// Generators (openapi-typescript, openapi-generator) build typed clients from it;
// tests/openapi/ lints it with Redocly and runs a generated client against a server.
#pragma once

#include "server/router.h"

#include <baton/json.h>

#include <string>
#include <vector>

namespace baton::server {

// components/schemas.
const Json& OpenApiSchemas();

// The document for `routes`. A route the table does not describe still appears, with
// no operationId and a generic object response: Redocly's lint (tests/openapi) fails on
// it, and UndocumentedRoutes names it.
Json OpenApiDocument(const std::vector<RouteInfo>& routes);

// "METHOD /pattern" of each route without an entry in the operation table.
std::vector<std::string> UndocumentedRoutes(const std::vector<RouteInfo>& routes);

}  // namespace baton::server
