// Command fleetpower prints the fleet outlier rule's power table of
// docs/fleet-scale.md ("Power at few runs per host"): for each run noise σ
// and number of runs per host, the share of trials in which one planted
// host is called an outlier (all its runs 20% lower, all 5% lower, only
// its newest run 20% lower) and the false hosts per A/A fleet (no host
// planted). It simulates with the fleet package's own rule
// (fleet.PowerSim), seeded: the same flags print the same table.
//
//	go run ./bench/fleetpower                      # the doc's table (1,000 trials per cell)
//	go run ./bench/fleetpower --trials 200 --seed 7
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/perflab/perflab/internal/fleet"
)

func main() {
	trials := flag.Int("trials", 1000, "fleets simulated per cell")
	hosts := flag.Int("hosts", 100, "hosts per fleet")
	spread := flag.Float64("host-spread", 0.003, "relative spread of the hosts' true values")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if flag.NArg() > 0 || *trials < 1 || *hosts < 3 || *spread < 0 {
		fmt.Fprintln(os.Stderr, "fleetpower: flags only: --trials ≥ 1, --hosts ≥ 3, --host-spread ≥ 0, --seed")
		os.Exit(2)
	}
	ks := []int{1, 2, 3, 5, 10, 20}
	fmt.Printf("%d hosts, host spread %.1f%%, %d trials per cell, seed %d\n\n", *hosts, *spread*100, *trials, *seed)
	fmt.Println("| run noise σ | runs per host | all runs 20% slower | all runs 5% slower | newest run 20% slower | false hosts per A/A fleet |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, sigma := range []float64{0.004, 0.02, 0.05} {
		var cols [4][]string
		for _, k := range ks {
			sim := func(effect float64, plant fleet.Planted) fleet.PowerResult {
				return fleet.PowerSim{Hosts: *hosts, Runs: k, HostSpread: *spread, RunNoise: sigma, Effect: effect,
					Plant: plant, Trials: *trials, Seed: *seed}.Simulate()
			}
			cols[0] = append(cols[0], pct(sim(0.2, fleet.PlantAll).Power))
			cols[1] = append(cols[1], pct(sim(0.05, fleet.PlantAll).Power))
			cols[2] = append(cols[2], pct(sim(0.2, fleet.PlantNewest).Power))
			cols[3] = append(cols[3], fmt.Sprintf("%.2f", sim(0, fleet.PlantNone).FalseHosts))
		}
		kk := make([]string, len(ks))
		for i, k := range ks {
			kk[i] = fmt.Sprint(k)
		}
		fmt.Printf("| %.1f%% | %s | %s%% | %s%% | %s%% | %s |\n", sigma*100, strings.Join(kk, " / "),
			strings.Join(cols[0], " / "), strings.Join(cols[1], " / "), strings.Join(cols[2], " / "), strings.Join(cols[3], " / "))
	}
}

func pct(x float64) string { return fmt.Sprintf("%.1f", x*100) }
