// A Kubernetes client as a controller is: client-go, one clientset for the whole loop, built from a kubeconfig with
// client-go's own transport and defaults (connection reuse, HTTP/2 when the server offers it, with its health checks:
// a ping after 30 s without a frame, the connection dropped 15 s later without an answer; a 30 s dial timeout shared
// by the name's addresses in turn, a 10 s TLS handshake timeout; no request timeout: none is set here).
//
// Every -interval it asks GET -path (default /readyz) through the discovery REST client and prints one JSON line, the
// protocol of bench/failover/main.go: {"start": s, "end": s, "ok": bool, "answer": "...", "error": "...", "peer":
// "ip:port", "reused": bool}, times in seconds since its start; peer is the connection the request went out on and
// reused whether that connection was open already. With -dns host:port every name is resolved at that DNS server by
// Go's own resolver (net.DefaultResolver, which client-go's dialer uses), without a cache; without it, as resolv.conf
// says (e.g. under `ip netns exec` in a client namespace of the local cloud).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http/httptrace"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type line struct {
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	OK     bool    `json:"ok"`
	Peer   string  `json:"peer,omitempty"`
	Reused bool    `json:"reused,omitempty"`
	Answer string  `json:"answer,omitempty"`
	Error  string  `json:"error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig to load (its current context)")
	dns := flag.String("dns", "", "the DNS server to resolve at, host:port (default: resolv.conf)")
	duration := flag.Duration("duration", 60*time.Second, "how long to loop")
	interval := flag.Duration("interval", 500*time.Millisecond, "pause after each request")
	path := flag.String("path", "/readyz", "the path each request GETs")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "usage: hafailover-clientgo -kubeconfig FILE [-dns HOST:PORT] [-duration D] [-interval I] [-path P]")
		os.Exit(2)
	}
	if *dns != "" {
		net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, *dns)
		}}
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(2)
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientset:", err)
		os.Exit(2)
	}
	rest := clientset.Discovery().RESTClient()
	out := json.NewEncoder(os.Stdout)
	began := time.Now()
	for time.Since(began) < *duration {
		result := line{Start: time.Since(began).Seconds()}
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			result.Peer, result.Reused = info.Conn.RemoteAddr().String(), info.Reused
		}}
		body, err := rest.Get().AbsPath(*path).DoRaw(httptrace.WithClientTrace(context.Background(), trace))
		answer := strings.TrimSpace(string(body))
		if len(answer) > 80 {
			answer = answer[:80]
		}
		result.Answer, result.OK = answer, err == nil
		if err != nil {
			result.Error = err.Error()
		}
		result.End = time.Since(began).Seconds()
		out.Encode(result)
		time.Sleep(*interval)
	}
}
