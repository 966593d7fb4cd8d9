/* facts: the schema of the incident facts (nicstall.rules(5) "FACTS"),
 * schema FACTS_SCHEMA. The daemon writes them (daemon/facts.c), the rules
 * read them, the bundle summary and the report print them: every key is
 * named here once.
 *
 *   { schema, port,
 *     ports: { NAME: { profile, driver, firmware, psid, link_up,
 *                      stall|window|baseline: { span_s, counters: {NAME: delta} } } },
 *     flows: { stalled, progressing, held: {unsent, unread, staged},
 *              list: [ {tuple, src, waited_ms, unsent, inflight, unread, staged} ] },
 *     threads: [ {pid, tid, comm, state, wchan, stack, syscall, vcsw_rate,
 *                 nvcsw_rate, role} ],
 *     pings: [ {from, to, sent, received} ],
 *     captures: [ {port, promisc, frames, transition} ],
 *     release: { released, action (self | promisc-capture | reprogram |
 *                ambiguous | none), port, after_ms, at_ms, ambiguous,
 *                after_second_ms, actions: [...] } } */
#ifndef NICSTALL_FACTS_KEYS_H
#define NICSTALL_FACTS_KEYS_H

#define FACTS_SCHEMA 1

#define FK_SCHEMA       "schema"
#define FK_PORT         "port"
#define FK_PORTS        "ports"
#define FK_FLOWS        "flows"
#define FK_THREADS      "threads"
#define FK_PINGS        "pings"
#define FK_CAPTURES     "captures"
#define FK_RELEASE      "release"

/* ports.NAME */
#define FK_P_PROFILE    "profile"
#define FK_P_DRIVER     "driver"
#define FK_P_FIRMWARE   "firmware"
#define FK_P_PSID       "psid"
#define FK_P_LINK_UP    "link_up"
/* the three periods of a port, each { span_s, counters } */
#define FK_PER_STALL    "stall"
#define FK_PER_WINDOW   "window"
#define FK_PER_BASELINE "baseline"
#define FK_SPAN_S       "span_s"
#define FK_COUNTERS     "counters"

/* flows */
#define FK_F_STALLED    "stalled"
#define FK_F_PROGRESSING "progressing"
#define FK_F_HELD       "held"
#define FK_F_LIST       "list"
#define FK_H_UNSENT     "unsent"
#define FK_H_UNREAD     "unread"
#define FK_H_STAGED     "staged"
/* flows.list[] */
#define FK_FL_TUPLE     "tuple"
#define FK_FL_SRC       "src"
#define FK_FL_WAITED_MS "waited_ms"
#define FK_FL_INFLIGHT  "inflight"

/* threads[] */
#define FK_T_PID        "pid"
#define FK_T_TID        "tid"
#define FK_T_COMM       "comm"
#define FK_T_STATE      "state"
#define FK_T_WCHAN      "wchan"
#define FK_T_STACK      "stack"
#define FK_T_SYSCALL    "syscall"
#define FK_T_VCSW_RATE  "vcsw_rate"
#define FK_T_NVCSW_RATE "nvcsw_rate"
#define FK_T_ROLE       "role"

/* pings[] */
#define FK_PG_FROM      "from"
#define FK_PG_TO        "to"
#define FK_PG_SENT      "sent"
#define FK_PG_RECEIVED  "received"

/* captures[] */
#define FK_C_PORT       "port"
#define FK_C_PROMISC    "promisc"
#define FK_C_FRAMES     "frames"
#define FK_C_TRANSITION "transition"

/* release */
#define FK_R_RELEASED   "released"
#define FK_R_ACTION     "action"
#define FK_R_AFTER_MS   "after_ms"     /* from the releasing action's effect */
#define FK_R_PORT       "port"         /* the port of the releasing action */
#define FK_R_AT_MS      "at_ms"        /* from the investigation's start */
#define FK_R_AMBIGUOUS  "ambiguous"    /* "ambiguous between X on P and Y on Q" */
#define FK_R_AFTER_SECOND_MS "after_second_ms"  /* ... from the second's effect */

/* The name a counter has in facts: "netdev/NAME" for netdev stats64 (their
 * names clash with driver counters), NAME as is otherwise. */
#define FACTS_NETDEV_PREFIX "netdev/"

#endif
