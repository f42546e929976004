// The child workflows `baton run` and `baton resume` can start: the workflow files of one
// directory, found by the `name:` inside them (not by file name).
//
// Threading: one thread (the engine's).
#pragma once

#include <baton/status.h>
#include <baton/workflow.h>

#include <map>
#include <memory>
#include <string>

namespace baton::cli {

class WorkflowDirectory {
 public:
  explicit WorkflowDirectory(std::string dir) : dir_(std::move(dir)) {}

  // The workflow `name` (version 0: the highest version found), from the *.yaml, *.yml
  // and *.json files of the directory, read on first use; each pick is said once on
  // stderr ("baton: child workflow 'x' from dir/x.yaml"). NOT_FOUND lists the names
  // the directory has; a file that does not parse is skipped, and named if no other
  // file has the workflow.
  Result<std::shared_ptr<const WorkflowDef>> Find(const std::string& name, int version);
  // The highest version of `name` the directory has, or null; says nothing.
  std::shared_ptr<const WorkflowDef> Peek(const std::string& name);
  const std::string& dir() const { return dir_; }

 private:
  struct Entry {
    std::string file;
    std::shared_ptr<const WorkflowDef> def;
  };
  void Scan();

  std::string dir_;
  bool scanned_ = false;
  std::map<std::pair<std::string, int>, Entry> found_;  // (name, version) -> file
  std::map<std::string, std::string> broken_;           // file -> first error
  std::map<std::string, bool> announced_;               // "name@version" said on stderr
};

}  // namespace baton::cli
