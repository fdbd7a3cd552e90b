// The statistics record each tool leaves for vcx-run (toolproc/session).
#include <catch2/catch.hpp>
#include <string>

#include "session/tool_stats.h"

using vcx::session::ToolStats;

TEST_CASE("tool stats: the documented record", "[launcher]") {
  std::string error;
  const auto r = ToolStats::from_json(
      R"({"rank":0,"events":123,"clocked_calls":45,"stall_ns":1000,"backpressure_ns":0,"app":"finalized"})",
      &error);
  REQUIRE(r);
  CHECK(r->rank == 0);
  CHECK(r->events == 123);
  CHECK(r->clocked_calls == 45);
  CHECK(r->stall_ns == 1000);
  CHECK(r->backpressure_ns == 0);
  CHECK(r->app == "finalized");
  CHECK_FALSE(r->aborted);
  CHECK(r->stopped_at_ns == 0);
}

TEST_CASE("tool stats: what a tool writes reads back the same", "[launcher]") {
  ToolStats w;
  w.rank = 7;
  w.events = 18446744073709551615ULL;
  w.clocked_calls = 3;
  w.stall_ns = 4;
  w.backpressure_ns = 5;
  w.released_replies = 6;
  w.messages_sent = 7;
  w.bytes_sent = 8;
  w.shm_messages_sent = 9;
  w.wakeups_sent = 10;
  w.leased_acquisitions = 11;
  w.peak_backlog = 12;
  w.stall = "never";
  w.cpu_ns = 13;
  w.transport = "shm";
  w.channel = "tcp";
  w.max_rss_kb = 14;
  w.app = "crashed";
  w.aborted = true;
  w.reason = "a \"quoted\" \\ reason";
  w.stopped_at_ns = 15;
  const std::string text = w.to_json();
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);  // one line
  std::string error;
  const auto r = ToolStats::from_json(text, &error);
  REQUIRE(r);
  CHECK(r->rank == 7);
  CHECK(r->events == w.events);
  CHECK(r->clocked_calls == 3);
  CHECK(r->stall_ns == 4);
  CHECK(r->backpressure_ns == 5);
  CHECK(r->released_replies == 6);
  CHECK(r->messages_sent == 7);
  CHECK(r->bytes_sent == 8);
  CHECK(r->shm_messages_sent == 9);
  CHECK(r->wakeups_sent == 10);
  CHECK(r->leased_acquisitions == 11);
  CHECK(r->peak_backlog == 12);
  CHECK(r->stall == "never");
  CHECK(r->cpu_ns == 13);
  CHECK(r->transport == "shm");
  CHECK(r->channel == "tcp");
  CHECK(r->max_rss_kb == 14);
  CHECK(r->app == "crashed");
  CHECK(r->aborted);
  CHECK(r->reason == w.reason);
  // Control characters are left out: the summary prints the reason in one line.
  w.reason = "over\ntwo lines";
  CHECK(ToolStats::from_json(w.to_json(), &error)->reason == "overtwo lines");
  CHECK(r->stopped_at_ns == 15);

  // A reason that is not UTF-8 (a path, a peer's bytes) is written anyway.
  w.reason = "cannot open /tmp/\xff\xfe";
  const auto bad = ToolStats::from_json(w.to_json(), &error);
  REQUIRE(bad);
  CHECK(bad->reason.rfind("cannot open /tmp/", 0) == 0);
}

TEST_CASE("tool stats: lenient reading", "[launcher]") {
  std::string error;
  const auto r = ToolStats::from_json(
      " {\n \"rank\" : 3 , \"extra\": {\"nested\": [1, {\"deep\": true}, \"]\"]},\n"
      " \"events\": 18446744073709551615, \"stall_ns\": 2.5e3, \"clocked_calls\": -4,\n"
      " \"app\": \"cr\\u0061shed\", \"flag\": false, \"none\": null, \"list\": [],\n"
      " \"reason\": \"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\" }\n",
      &error);
  REQUIRE(r);
  CHECK(r->rank == 3);
  CHECK(r->events == 18446744073709551615ULL);
  CHECK(r->stall_ns == 2500);
  CHECK(r->clocked_calls == 0);
  CHECK(r->app == "crashed");
  CHECK(r->reason == "a\"b\\c\n\xC3\xA9\xF0\x9F\x98\x80");

  // Wrong types and missing fields keep the defaults.
  const auto d = ToolStats::from_json(R"({"rank":"one","events":"many","app":7,"aborted":1})",
                                      &error);
  REQUIRE(d);
  CHECK(d->rank == -1);
  CHECK(d->events == 0);
  CHECK(d->app.empty());
  CHECK_FALSE(d->aborted);
  CHECK(ToolStats::from_json("{}", &error));
}

TEST_CASE("tool stats: broken files are reported, not fatal", "[launcher]") {
  for (const char* bad : {"", "[]", "{", "{\"a\" 1}", "{\"a\":}", "{\"a\":1,}", "{\"a\":tru}",
                          "{\"a\":\"unterminated}", "{\"a\":1 \"b\":2}", "{\"a\":\"\\q\"}",
                          "{} trailing"}) {
    std::string error;
    INFO(bad);
    CHECK_FALSE(ToolStats::from_json(bad, &error));
    CHECK_FALSE(error.empty());
  }
  // Deep nesting is refused.
  const std::string deep =
      "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  std::string error;
  CHECK_FALSE(ToolStats::from_json(deep, &error));
  CHECK(error.find("nested deeper") != std::string::npos);
}
