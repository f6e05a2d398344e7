module github.com/eclipse/paho.mqtt.golang

go 1.24.0

require (
	golang.org/x/sync v0.17.0
)
