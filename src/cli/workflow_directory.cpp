#include "cli/workflow_directory.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace baton::cli {

namespace {
// A directory of workflows is small; a huge one is a mistake (the home directory).
constexpr size_t kMaxFiles = 1000;
}  // namespace

void WorkflowDirectory::Scan() {
  scanned_ = true;
  std::error_code ec;
  std::vector<std::string> files;
  for (auto it = std::filesystem::directory_iterator(dir_, ec);
       !ec && it != std::filesystem::directory_iterator() && files.size() < kMaxFiles;
       it.increment(ec)) {
    const std::string ext = it->path().extension().string();
    if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && it->is_regular_file(ec)) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());  // the first file wins a tie, every time
  for (const std::string& file : files) {
    ParseOutcome out = LoadWorkflowFile(file);
    if (!out.ok()) {
      broken_[file] = out.diagnostics.empty() ? "invalid" : out.diagnostics[0].ToString();
      continue;
    }
    auto def = std::make_shared<const WorkflowDef>(std::move(*out.workflow));
    found_.emplace(std::make_pair(def->name, def->version), Entry{file, def});
  }
}

std::shared_ptr<const WorkflowDef> WorkflowDirectory::Peek(const std::string& name) {
  if (!scanned_) Scan();
  std::shared_ptr<const WorkflowDef> pick;
  for (const auto& [key, entry] : found_) {
    if (key.first == name) pick = entry.def;  // ordered by version: the last is the highest
  }
  return pick;
}

Result<std::shared_ptr<const WorkflowDef>> WorkflowDirectory::Find(const std::string& name,
                                                                   int version) {
  if (!scanned_) Scan();
  const Entry* pick = nullptr;
  for (const auto& [key, entry] : found_) {
    if (key.first == name && (version == 0 || key.second == version)) pick = &entry;  // highest
  }
  if (pick == nullptr) {
    std::string names;
    for (const auto& [key, entry] : found_) {
      names += (names.empty() ? "" : ", ") + key.first + "@" + std::to_string(key.second);
    }
    std::string message = "no workflow '" + name + "'" +
                          (version ? " version " + std::to_string(version) : "") + " in " + dir_ +
                          " (it has: " + (names.empty() ? "none" : names) + ")";
    if (!broken_.empty()) {
      message += "; skipped " + std::to_string(broken_.size()) +
                 " file(s) that do not parse, e.g. " + broken_.begin()->second;
    }
    return Status(errc::kNotFound, message);
  }
  const std::string said = name + "@" + std::to_string(pick->def->version);
  if (!announced_[said]) {
    announced_[said] = true;
    std::fprintf(stderr, "baton: child workflow '%s' (version %d) from %s\n", name.c_str(),
                 pick->def->version, pick->file.c_str());
  }
  return pick->def;
}

}  // namespace baton::cli
