/* counts: what happened, to the one listener. See counts.h. */
#include "daemon/counts.h"

#include <stddef.h>

static const struct counts_ops *ops;
static void *ops_arg;

void counts_set(const struct counts_ops *o, void *arg)
{
	ops = o;
	ops_arg = o ? arg : NULL;
}

int counts_is(const void *arg)
{
	return ops && ops_arg == arg;
}

void count_incident_opened(const char *port, unsigned flows)
{
	if (ops && ops->incident_opened)
		ops->incident_opened(ops_arg, port, flows);
}

void count_flow_stalled(const char *port)
{
	if (ops && ops->flow_stalled)
		ops->flow_stalled(ops_arg, port);
}

void count_incident_suppressed(const char *port)
{
	if (ops && ops->incident_suppressed)
		ops->incident_suppressed(ops_arg, port);
}

void count_flow_released(const char *port, int closed)
{
	if (ops && ops->flow_released)
		ops->flow_released(ops_arg, port, closed);
}

void count_reprogram(const char *port, enum count_recov outcome)
{
	if (ops && ops->reprogram)
		ops->reprogram(ops_arg, port, outcome);
}

void count_bundle(const char *port, int ok, uint64_t incident, const char *verdict,
		  const char *action)
{
	if (ops && ops->bundle)
		ops->bundle(ops_arg, port, ok, incident, verdict, action);
}

void count_hook_result(const char *outcome)
{
	if (ops && ops->hook_result)
		ops->hook_result(ops_arg, outcome);
}

void count_hook_dropped(void)
{
	if (ops && ops->hook_dropped)
		ops->hook_dropped(ops_arg);
}

void count_reload(int ok)
{
	if (ops && ops->reload)
		ops->reload(ops_arg, ok);
}
