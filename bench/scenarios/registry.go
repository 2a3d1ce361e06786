package scenarios

import (
	"github.com/geostat-engine/geostat/bench/harness"
)

// All returns every scenario, available or not, in listing order. A
// scenario whose package is not in the module yet is listed as
// harness.Scenario{Name, Description, Missing: "package"} without a Setup.
func All() []harness.Scenario {
	return []harness.Scenario{
		knn(),
		idwScenario(),
		declusteringScenario(),
		declusCellScenario(),
		normalScoreScenario(),
		krigingScenario("kriging-sk", krigingSK),
		krigingScenario("kriging-ok", krigingOK),
		krigingScenario("kriging-block", krigingBlock),
		tbsimScenario("tbsim-uncond", tbsimUncond),
		tbsimScenario("tbsim-cond", tbsimCond),
		tbsimScenario("tbsim-cond-block", tbsimCondBlock),
		breakTies(),
		variogramExperimental(),
		variogramFit(),
		reportScenario(),
		parquetWrite(),
		parquetRead(),
		locationWise(),
		workerE2E(),
		jobsOverhead(),
		authLookup(),
		bmKriging(),
		consimScenario(),
		clusterQueue(),
		clusterAssemble(),
		clusterTwoComputes(),
		bmCreate(),
		bmAddColumn(),
		bmQuery(),
		bmAddColumnE2E(),
		bmQueryE2E(),
	}
}

// Lookup returns the scenario with the given name.
func Lookup(name string) (harness.Scenario, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return harness.Scenario{}, false
}
