// The types of the events an execution's log holds (EventRecord::type): what the live
// feed's `types=` filter accepts, so that a misspelt type is refused instead of
// matching nothing forever.
//
// The list is kept true by tests/CMakeLists.txt's EventTypes.* checks
// (scripts/check_event_types.sh): every type the sources emit is listed, and every
// listed type is emitted somewhere.
#pragma once

#include <span>
#include <string_view>

namespace baton {

// Every event type, sorted, e.g. "execution.completed", "step.started".
std::span<const std::string_view> EventTypes();

// Whether `type` is one of EventTypes().
bool IsEventType(std::string_view type);

// Whether `family` is the part before the dot of some event type ("execution", "step").
bool IsEventFamily(std::string_view family);

}  // namespace baton
