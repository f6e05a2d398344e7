package testutil

// RulesBoard is the config the rules tests append their [[rule]] tables
// to: one board, no auth, a button, a pump and a temperature sensor.
const RulesBoard = `
[node]
name = "ews1"
[http]
auth = "none"
[[device]]
name = "button1"
driver = "sim-button"
[[device]]
name = "pump1"
driver = "sim-switch"
[[device]]
name = "temp1"
driver = "sim-sensor"
`
