package snapshot

// TODO(helper): implement.
func collectPower(c *collector) {}
