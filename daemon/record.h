/* record: the keys of an investigation record (`nicstallctl -j incident
 * show`, record.json in a bundle; nicstall-bundle(5)), written by the
 * forensic sequence and read by the facts builder and the bundle writer. */
#ifndef NICSTALL_RECORD_H
#define NICSTALL_RECORD_H

#define IR_ID             "id"
#define IR_INCIDENT       "incident"       /* the incident's JSON at the end */
#define IR_INCIDENT_ID    "incident_id"
#define IR_TRIGGER        "trigger"        /* "stall" | "manual" */
#define IR_PORT           "port"
#define IR_OPENED_MONO    "opened_mono_ns"
#define IR_OPENED_REAL    "opened_real_ns"
#define IR_STATE          "state"          /* "running" | "complete" */
#define IR_PHASE          "phase"
#define IR_STEPS          "steps"
#define IR_SNAPSHOT       "snapshot"       /* {PORT: {state, counters, link, neighbours}, flows} */
#define IR_SNAPSHOT_AFTER "snapshot_after"
#define IR_WINDOW         "window"         /* {span_s, samples, PORT: {deltas, series}} */
#define IR_PINGS          "pings"
#define IR_PINGS_MTU      "pings_mtu"      /* the don't-fragment pings at the port's MTU */
#define IR_THREADS        "threads"
#define IR_PROBES         "probes"
#define IR_CAPTURES       "captures"
#define IR_REPROGRAMS     "reprograms"
#define IR_PORT_ORDER     "port_order"     /* [{port, gap, drops, score}] */
#define IR_JOURNAL        "journal"
#define IR_RELEASE        "release"        /* {released, action, after_ms} */
#define IR_ENGINES        "engines"        /* {at_stall, after}: {onload, vma, rdmaqp: {PORT}}
					    * the readers of unmodified engines (evid_flows.h) */
#define IR_FACTS          "facts"
#define IR_VERDICT        "verdict"
#define IR_BUNDLE         "bundle"
#define IR_BUNDLE_ERROR   "bundle_error"
#define IR_PEERS          "peers"          /* {NAME: {address, port, notified, answered, rtt_ms, summary}} */
#define IR_PEER           "peer"           /* a peer's snapshot: {origin_host, origin_peer, incident_id, ...} */
#define IR_STALL_MONO     "stall_mono_ns"  /* when the stall began, if not from the incident's flows */
#define IR_HOST           "host"           /* this host's name (host_name) */

#define IR_DEVLINK_EVENTS "devlink_events" /* {PORT: [{time_ns, t_ms, reporter, handle, state,
					    * error_count, recover_count}]} */
#define IR_DEVLINK_DUMPS  "devlink_dumps"  /* {PORT: {REPORTER: {file, bytes, retaken} |
					    * {skipped: why}}} */

/* snapshot.PORT */
#define IR_S_STATE        "state"
#define IR_S_DEVLINK      "devlink_health" /* port_devlink_json(): reporters or "no devlink health" */
#define IR_S_HOST         "host"           /* port_host_json(): devices' identity, processes */
#define IR_S_APP          "app_metrics"    /* port_app_json(): endpoints, each with its
					    * last page (text) */
#define IR_S_COUNTERS     "counters"
#define IR_S_LINK         "link"
#define IR_S_NEIGHBOURS   "neighbours"
#define IR_S_FLOWS        "flows"
#define IR_S_FLOWS_TOTAL  "flows_total"     /* all of them; at most STALL_FLOWS_LISTED listed */

#endif
