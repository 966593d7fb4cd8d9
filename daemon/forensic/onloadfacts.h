/* onloadfacts: an investigation record's Onload stacks as rule facts
 * (onload[]): each stack of the engines' evidence, its stackdumps before
 * (the periodic one handed over at the stall), during and after, matched
 * by stack id; the counters and options the rules name, each absent when
 * no dump printed it, never 0 (nicstall.rules(5)). No I/O: it
 * reads the record only. Called by facts.c. */
#ifndef NICSTALL_ONLOADFACTS_H
#define NICSTALL_ONLOADFACTS_H

struct json_object;

/* A new array, empty when rec holds no Onload stack; at most
 * ONLOAD_FACTS_MAX (8) stacks. */
struct json_object *onload_facts(struct json_object *rec);

#endif
