/* report: a bundle as a picture (nicstall-bundle(5) "report.html").
 *
 * One self-contained HTML page (inline CSS and SVG drawn here, no script,
 * no font, no request; readable printed and without colour) that tells the
 * stall: the verdict and its sentence, per port the frame rates at the port
 * and at the vport and the drops by kind over the flight-recorder window and
 * the fast observation window with bands for the stall, every action and
 * the release; the gap (port minus vport) against the learned healthy rate;
 * the stalled flows and their siblings; the engine threads; "what it is
 * not"; the counters that moved (plotted) and the rest (named); links to
 * the evidence files. And the same story as a few lines of text for
 * `nicstallctl show`.
 *
 * A report is built from a manifest and the bundle's files, either read
 * from a bundle directory (bundle_read_file: bounded, beneath the bundle,
 * never through a symbolic link) or handed over in memory by the daemon
 * before bundle_write. Bundles are hostile input: every name and value is
 * escaped, sizes and counts are bounded, missing files are said to be
 * missing. */
#ifndef NICSTALL_REPORT_H
#define NICSTALL_REPORT_H

#include <stddef.h>
#include <stdio.h>

struct json_object;
struct rules;
struct bundle_file;

#define REPORT_NAME "report.html"       /* its name inside a bundle */

struct report;

struct report_opts {
	/* Signal definitions (port_frames, vport_frames, gap, buffer_drops,
	 * steer_misses, fabric_errors per profile); NULL: the built-in copy
	 * of the shipped ones. */
	const struct rules *rules;
	/* Prefix of every evidence link ("" or NULL inside the bundle; the
	 * path from the report to the bundle directory otherwise, ending in
	 * '/'). Characters outside [A-Za-z0-9._~/-] are percent-encoded. */
	const char *link_prefix;
	/* Shown in the header when set: the bundle's name, and what
	 * verification said ("checksums verified", the first offence). */
	const char *bundle_name;
	const char *verify_note;
};

/* Read a bundle directory: manifest.json (bundle_load_manifest: schema 1
 * and older) and the JSON files the report draws from. A file that is
 * missing or unreadable is noted in the report, not an error. NULL with err
 * only when the manifest cannot be read. */
struct report *report_load_dir(const char *path, char *err, size_t errlen);
/* The same from memory: manifest (a reference is taken) and the files about
 * to be written (bundle_write's list; files with src_path only are linked,
 * never read). */
struct report *report_load_mem(struct json_object *manifest, const struct bundle_file *files,
			       size_t nfiles, char *err, size_t errlen);
void report_free(struct report *r);

/* The HTML page. Returns 0, or -1 when writing to out failed. */
int report_html(const struct report *r, const struct report_opts *o, FILE *out);
/* The same as a malloc'd string (length in *len), NULL when out of memory. */
char *report_html_string(const struct report *r, const struct report_opts *o, size_t *len);
/* The text timeline: one line per step with its offset in ms from the
 * start of the investigation, the stall and the release, and per port
 * sparklines of the port and vport rates (UTF-8 block characters when utf8
 * is set, ASCII otherwise). Returns 0, or -1 when writing failed. */
int report_timeline(const struct report *r, const struct report_opts *o, int utf8, FILE *out);

#endif
