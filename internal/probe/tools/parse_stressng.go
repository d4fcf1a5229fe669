package tools

import (
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// StressNGResult is the metrics section of stress-ng's --yaml report.
//
// Formats. Every release writes "system-info" (with stress-ng-version) and
// "metrics", a list with one entry per stressor: bogo-ops,
// bogo-ops-per-second-usr-sys-time, bogo-ops-per-second-real-time,
// wall-clock-time, user-time and system-time. 0.15 adds
// cpu-usage-per-instance, max-rss and stressor-specific metrics
// ("nanosecs-per-context-switch-pipe-method"); 0.09 has only the six. A
// run that failed before measuring writes system-info and no metrics.
type StressNGResult struct {
	Version   string
	Stressors map[string]StressNGStressor
}

// StressNGStressor is one stressor's metrics.
type StressNGStressor struct {
	BogoOps            float64
	BogoOpsPerSecReal  float64
	BogoOpsPerSecUsSys float64
	WallSeconds        float64
	Extra              map[string]float64 // the remaining numeric keys
}

// ParseStressNG parses a stress-ng --yaml file.
func ParseStressNG(b []byte) (*StressNGResult, error) {
	var raw struct {
		SystemInfo map[string]any   `yaml:"system-info"`
		Metrics    []map[string]any `yaml:"metrics"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, parseErrorf("stress-ng YAML: %v", err)
	}
	r := &StressNGResult{Stressors: map[string]StressNGStressor{}}
	if v, ok := raw.SystemInfo["stress-ng-version"]; ok {
		r.Version = fmt.Sprint(v)
	}
	for _, m := range raw.Metrics {
		name, _ := m["stressor"].(string)
		if name == "" {
			continue
		}
		s := StressNGStressor{Extra: map[string]float64{}}
		ok := false
		for k, v := range m {
			f, isNum := yamlNumber(v)
			if !isNum {
				continue
			}
			switch k {
			case "bogo-ops":
				s.BogoOps = f
			case "bogo-ops-per-second-real-time":
				s.BogoOpsPerSecReal, ok = f, true
			case "bogo-ops-per-second-usr-sys-time":
				s.BogoOpsPerSecUsSys = f
			case "wall-clock-time":
				s.WallSeconds = f
			default:
				s.Extra[k] = f
			}
		}
		if ok {
			r.Stressors[strings.ToLower(name)] = s
		}
	}
	if len(r.Stressors) == 0 {
		return r, parseErrorf("stress-ng YAML has no stressor metrics")
	}
	return r, nil
}

func yamlNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}
