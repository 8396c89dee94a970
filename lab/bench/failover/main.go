// A client as kubectl and client-go are: Go's net/http with the standard dialer, which tries the addresses a name
// resolves to in order and gives each a share of its dial timeout (30 s by default). Each request opens a new
// connection and resolves the name again, at the DNS server given (the local cloud's named), without a cache.
//
// One JSON line per request on stdout: {"start": s, "end": s, "ok": bool, "peer": "ip:port", "error": "..."}, the
// times in seconds since the loop began. Standard library only (bench/failover_figures.py builds and runs it).
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"time"
)

type line struct {
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	OK     bool    `json:"ok"`
	Peer   string  `json:"peer,omitempty"`
	Answer string  `json:"answer,omitempty"`
	Error  string  `json:"error,omitempty"`
}

func main() {
	url := flag.String("url", "", "the URL to ask, e.g. https://api.example.test:6443/")
	dns := flag.String("dns", "", "the DNS server to resolve at, host:port")
	duration := flag.Duration("duration", 60*time.Second, "how long to loop")
	interval := flag.Duration("interval", 200*time.Millisecond, "pause after each request")
	dialTimeout := flag.Duration("dial-timeout", 30*time.Second, "the dialer's timeout (Go's default transport: 30 s)")
	responseTimeout := flag.Duration("response-timeout", 0,
		"how long a sent request waits for the response's headers (0: Go's default, no bound)")
	flag.Parse()
	if *url == "" || *dns == "" {
		fmt.Fprintln(os.Stderr, "usage: hafailover -url URL -dns HOST:PORT [-duration D] [-interval I]")
		os.Exit(2)
	}
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, *dns)
	}}
	dialer := &net.Dialer{Timeout: *dialTimeout, KeepAlive: 30 * time.Second, Resolver: resolver}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = dialer.DialContext
	transport.DisableKeepAlives = true
	transport.ResponseHeaderTimeout = *responseTimeout
	transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the members' certificates are self-signed
	client := &http.Client{Transport: transport}
	out := json.NewEncoder(os.Stdout)
	began := time.Now()
	for time.Since(began) < *duration {
		start := time.Since(began).Seconds()
		var peer string
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { peer = info.Conn.RemoteAddr().String() }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", *url, nil)
		resp, err := client.Do(req)
		result := line{Start: start, Peer: peer}
		if err == nil {
			var body []byte
			body, err = io.ReadAll(io.LimitReader(resp.Body, 80))
			resp.Body.Close()
			result.Answer = strings.TrimSpace(string(body))
			result.OK = err == nil && resp.StatusCode < 500
			if err == nil && !result.OK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
		}
		if err != nil {
			result.Error = err.Error()
		}
		result.Peer = peer
		result.End = time.Since(began).Seconds()
		out.Encode(result)
		time.Sleep(*interval)
	}
}
