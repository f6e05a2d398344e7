// Package mqtttest starts a real mosquitto broker on loopback for tests, and a client that records what it hears.
package mqtttest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Broker starts mosquitto on a free loopback port (anonymous clients
// allowed) and returns its address as tcp://127.0.0.1:PORT; the test stops
// it. It skips the test when mosquitto is not installed (scripts/test.sh
// installs it).
func Broker(t testing.TB) string {
	t.Helper()
	port := freePort(t)
	start(t, fmt.Sprintf("listener %d 127.0.0.1\n", port), port)
	return fmt.Sprintf("tcp://127.0.0.1:%d", port)
}

func mosquitto(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		for _, p := range []string{"/usr/sbin/mosquitto", "/usr/bin/mosquitto"} {
			if _, err := os.Stat(p); err == nil {
				bin = p
			}
		}
	}
	if bin == "" {
		t.Skip("mqtttest: mosquitto is not installed (apt-get install mosquitto, or run scripts/test.sh)")
	}
	return bin
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs mosquitto with listeners (its config lines) and waits until
// every port in wait accepts connections.
func start(t testing.TB, listeners string, wait ...int) {
	t.Helper()
	bin := mosquitto(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "mosquitto.conf")
	// user root: started as root, mosquitto would switch to its own user,
	// who cannot read the test's files
	body := "allow_anonymous true\npersistence false\nlog_dest stderr\nlog_type error\nlog_type warning\n"
	if os.Geteuid() == 0 {
		body = "user root\n" + body
	}
	if err := os.WriteFile(conf, []byte(body+listeners), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("mqtttest: start mosquitto: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	for _, port := range wait {
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		testutil.Eventually(t, "mosquitto listens on "+addr, func() bool {
			c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err != nil {
				return false
			}
			c.Close()
			return true
		})
	}
}

// Recorder is a client subscribed to "#" that keeps the last payload of
// every topic (retained ones included).
type Recorder struct {
	C    paho.Client
	mu   sync.Mutex
	last map[string]string
	all  []Message
}

// Message is one message the Recorder heard.
type Message struct {
	Topic, Payload string
	Retained       bool
}

// Listen connects a Recorder to broker; the test disconnects it.
func Listen(t testing.TB, broker, filter string) *Recorder {
	t.Helper()
	r := &Recorder{last: map[string]string{}}
	opts := paho.NewClientOptions().AddBroker(broker).SetClientID(fmt.Sprintf("rec-%d", time.Now().UnixNano())).SetCleanSession(true)
	r.C = paho.NewClient(opts)
	if tok := r.C.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtttest: connect: %v", tok.Error())
	}
	tok := r.C.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.last[m.Topic()] = string(m.Payload())
		r.all = append(r.all, Message{m.Topic(), string(m.Payload()), m.Retained()})
	})
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtttest: subscribe: %v", tok.Error())
	}
	t.Cleanup(func() { r.C.Disconnect(100) })
	return r
}

// Last is the last payload heard on topic.
func (r *Recorder) Last(topic string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.last[topic]
	return p, ok
}

// Publish sends a (not retained) message at QoS 1.
func (r *Recorder) Publish(t testing.TB, topic, payload string) {
	t.Helper()
	if tok := r.C.Publish(topic, 1, false, payload); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtttest: publish %s: %v", topic, tok.Error())
	}
}

// Topics lists every topic heard so far.
func (r *Recorder) Topics() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.last))
	for k, v := range r.last {
		out[k] = v
	}
	return out
}

// History lists every payload heard on topic, oldest first.
func (r *Recorder) History(topic string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.all {
		if m.Topic == topic {
			out = append(out, m.Payload)
		}
	}
	return out
}
