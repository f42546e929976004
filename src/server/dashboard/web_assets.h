// The dashboard's files (web/), compiled into the binary by cmake/embed_web.cmake: no
// Node.js, CDN or second process at run time.
#pragma once

#include <span>
#include <string_view>

namespace baton::server {

struct WebAsset {
  std::string_view name;          // "index.html", "app.js", ...
  std::string_view content_type;  // with its charset
  std::string_view etag;          // "\"<16 hex digits of SHA-256>\"" of the content
  std::string_view hash;          // the same digits: the path segment of /ui/HASH/NAME
  std::string_view plain;
  std::string_view gzipped;
};

// Every file, index.html last. Static data: valid for the life of the process.
std::span<const WebAsset> WebAssets();

}  // namespace baton::server
