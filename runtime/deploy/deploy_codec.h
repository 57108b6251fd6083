// The one place where the deployment (agent, watch --redis) touches the event
// codec and the device-id layout: events to and from the wire, their
// deterministic ids, and which shard they go to. The event codec is being
// unified elsewhere; switching to it is a change in deploy_codec.cpp only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reflex/event.h"
#include "reflex/topology.h"

namespace reflex::deploy {

std::string encode_event(const Event& ev);
std::optional<Event> decode_event(std::string_view payload, std::string* err);
// Same event from the same place in the same source -> same id (a redelivery
// after a restart is recognized). `source` names the input (file identity,
// "stdin").
std::string event_id(const Event& ev, std::string_view source);
// The event's shard: its job (a job device, or the job of its host), else its
// host, else kClusterShard. Shard names go into Redis keys' hash tags.
inline constexpr const char* kClusterShard = "cluster";
std::string shard_of(const Event& ev, const Topology& topo);
// The host part of a device id ("" for job/fabric/storage devices).
std::string host_of_device(const std::string& device, const Topology& topo);

}  // namespace reflex::deploy
