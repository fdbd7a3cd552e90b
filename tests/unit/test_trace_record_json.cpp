// vcx-trace export's JSON Lines, read back with nlohmann-json: every field
// of a record, strings escaped, fields without a value left out.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "record_json.h"

using vcx::Rank;
using vcx::trace::Record;

TEST_CASE("trace export: a record as one line of JSON", "[trace]") {
  vcx::trace::SiteNames sites("/nonexistent", Rank{2});
  Record r;
  r.seq = 7;
  r.event = 41;
  r.call = "MPI_\"odd\\name\"\n\t\x01";  // every character class the writer escapes
  r.peers = {Rank{0}, Rank{3}};
  r.group = vcx::GroupId{0xabcdef};
  r.queue = vcx::QueueId{0x10, 0x2};
  vcx::MessageEnd sent{Rank{3}, true, false, false, vcx::QueueId{0x10, 0x2}, 5, 64};
  vcx::MessageEnd received{Rank{0}, false, true, false, vcx::QueueId{0x11, 0x3}, 1, 0};
  r.messages = {sent, received};
  r.enter_ns = 1'000;
  r.leave_ns = 2'500;
  r.call_site = 0x401234;
  r.clock = {1, 0, 9, 18446744073709551615ull};

  std::string line;
  vcx::trace::record_json_line(Rank{2}, r, sites, line);
  REQUIRE(!line.empty());
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line
  const auto j = nlohmann::json::parse(line);
  CHECK(j["rank"] == 2);
  CHECK(j["seq"] == 7);
  CHECK(j["event"] == 41);
  CHECK(j["call"] == r.call);
  CHECK(j["peers"] == nlohmann::json::array({0, 3}));
  CHECK(j["group"] == "0xabcdef");
  CHECK(j["queue"] == nlohmann::json::array({"0x10", "0x2"}));
  REQUIRE(j["messages"].size() == 2);
  CHECK(j["messages"][0] ==
        nlohmann::json::parse(R"({"to":3,"queue":["0x10","0x2"],"position":5,"bytes":64})"));
  CHECK(j["messages"][1] == nlohmann::json::parse(
                                R"({"from":0,"queue":["0x11","0x3"],"position":1,"bytes":0,
                                    "wildcard":true})"));
  CHECK(j["enter_ns"] == 1'000);
  CHECK(j["leave_ns"] == 2'500);
  CHECK(j["site"] == sites.name(0x401234));
  CHECK(j["clock"] == nlohmann::json::array({1, 0, 9, 18446744073709551615ull}));

  // A call with nothing but its clock.
  Record bare;
  bare.call = "MPI_Barrier";
  bare.clock = {1};
  vcx::trace::record_json_line(Rank{0}, bare, sites, line);
  const auto b = nlohmann::json::parse(line);
  CHECK(b.size() == 5);  // rank, seq, event, call, clock
  for (const char* absent : {"peers", "group", "queue", "messages", "enter_ns", "leave_ns", "site"})
    CHECK_FALSE(b.contains(absent));
}
