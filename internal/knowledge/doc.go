// Package knowledge is perflab's table of which host settings move which
// benchmark metrics, and why. compare uses it to turn a list of differing
// facts into ranked likely causes: a knob is only a suspect for metrics in
// the areas it is known to affect, and it becomes a likely cause when those
// metrics actually moved.
//
// Facts are named by the dotted paths of compare's snapshot diff
// ("memory.thp.enabled", "net.interfaces[eth0].rx_queues[rx-0].rps_cpus",
// "sysctl.vm.swappiness"); patterns match a path prefix segment by segment,
// where "*" matches one segment and "[*]" any array element. Metrics are
// sorted into areas by their probe, name and unit (AreasOf).
package knowledge
