// Command fleetpower prints the fleet outlier rule's power tables of
// docs/fleet-scale.md ("Power at few runs per host"): for each run noise σ
// and number of runs per host, the share of trials in which one planted
// host is called an outlier (all its runs 20% slower, all 5% slower, only
// its newest run 20% slower) and the false hosts per A/A fleet (no host
// planted); then the same for mixed fleets, where every second host has
// a single run. It simulates with the fleet package's own rule
// (fleet.PowerSim), seeded: the same flags print the same tables.
//
//	go run ./bench/fleetpower                      # the doc's tables (1,000 trials per cell)
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
	base := fleet.PowerSim{Hosts: *hosts, HostSpread: *spread, Trials: *trials, Seed: *seed}
	fmt.Printf("%d hosts, host spread %.1f%%, %d trials per cell, seed %d\n\n", *hosts, *spread*100, *trials, *seed)
	table(base, []float64{0.004, 0.02, 0.05}, []int{1, 2, 3, 5, 10, 20}, 0)
	fmt.Printf("\nMixed fleets: every second host has 1 run; the others and the planted host have k.\n\n")
	table(base, []float64{0.02, 0.05}, []int{2, 5, 10}, 1)
}

func table(base fleet.PowerSim, sigmas []float64, ks []int, other int) {
	fmt.Println("| run noise σ | runs per host | all runs 20% slower | all runs 5% slower | newest run 20% slower | false hosts per A/A fleet |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, sigma := range sigmas {
		var cols [4][]string
		for _, k := range ks {
			sim := func(effect float64, plant fleet.Planted) fleet.PowerResult {
				p := base
				p.Runs, p.OtherRuns, p.RunNoise, p.Effect, p.Plant = k, other, sigma, effect, plant
				return p.Simulate()
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
