// A closed-loop HTTPS load: -concurrency workers, each sending GET / to -addr one request after another for
// -duration, with a new TCP and TLS connection per request (as a client that does not reuse connections, the
// costliest case for the server: a TLS handshake each time) or, with -keepalive, one connection per worker kept open
// (as kubectl, client-go and the kubelet do). The members' certificates are self-signed: not verified.
//
// One JSON object on stdout: requests, ok, failed by kind, latency percentiles (ms) of the requests that answered,
// and the answers by body (the local cloud's member server answers "<member> <az>"). Standard library only
// (bench/keepalived_haproxy.py builds and runs it).
package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type summary struct {
	Concurrency int            `json:"concurrency"`
	KeepAlive   bool           `json:"keepalive"`
	Seconds     float64        `json:"seconds"`
	Requests    int            `json:"requests"`
	OK          int            `json:"ok"`
	Failed      map[string]int `json:"failed"`
	P50         float64        `json:"p50_ms"`
	P90         float64        `json:"p90_ms"`
	P99         float64        `json:"p99_ms"`
	Max         float64        `json:"max_ms"`
	Answers     map[string]int `json:"answers"`
}

type result struct {
	latency time.Duration
	answer  string
	err     string
}

func kind(err error) string {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case strings.Contains(err.Error(), "connection refused"):
		return "refused"
	case strings.Contains(err.Error(), "connection reset"):
		return "reset"
	case errors.Is(err, io.EOF) || strings.Contains(err.Error(), "EOF"):
		return "eof"
	default:
		return "other"
	}
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return float64(sorted[i].Microseconds()) / 1000
}

func main() {
	addr := flag.String("addr", "", "host:port to send the requests to")
	concurrency := flag.Int("concurrency", 1, "workers, each with one request in flight")
	duration := flag.Duration("duration", 10*time.Second, "how long the workers send")
	timeout := flag.Duration("timeout", 5*time.Second, "a request's bound, connection and handshake included")
	keepAlive := flag.Bool("keepalive", false, "one connection per worker kept open (else a new one per request)")
	flag.Parse()
	if *addr == "" || *concurrency < 1 {
		fmt.Fprintln(os.Stderr, "usage: loadgen -addr HOST:PORT [-concurrency N] [-duration D] [-timeout T] [-keepalive]")
		os.Exit(2)
	}
	url := "https://" + *addr + "/"
	results := make([][]result, *concurrency)
	var wg sync.WaitGroup
	began := time.Now()
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			transport := &http.Transport{
				DialContext:         (&net.Dialer{Timeout: *timeout}).DialContext,
				TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
				DisableKeepAlives:   !*keepAlive,
				MaxIdleConnsPerHost: 1,
				ForceAttemptHTTP2:   false,
			}
			client := &http.Client{Transport: transport, Timeout: *timeout}
			for time.Since(began) < *duration {
				start := time.Now()
				response, err := client.Get(url)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(response.Body)
					response.Body.Close()
				}
				r := result{latency: time.Since(start)}
				if err != nil {
					r.err = kind(err)
					transport.CloseIdleConnections()
				} else {
					r.answer = strings.TrimSpace(string(body))
				}
				results[w] = append(results[w], r)
			}
			transport.CloseIdleConnections()
		}(w)
	}
	wg.Wait()
	s := summary{Concurrency: *concurrency, KeepAlive: *keepAlive, Seconds: time.Since(began).Seconds(),
		Failed: map[string]int{}, Answers: map[string]int{}}
	var latencies []time.Duration
	for _, rs := range results {
		for _, r := range rs {
			s.Requests++
			if r.err != "" {
				s.Failed[r.err]++
				continue
			}
			s.OK++
			s.Answers[r.answer]++
			latencies = append(latencies, r.latency)
		}
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	s.P50, s.P90, s.P99 = percentile(latencies, 0.50), percentile(latencies, 0.90), percentile(latencies, 0.99)
	if len(latencies) > 0 {
		s.Max = float64(latencies[len(latencies)-1].Microseconds()) / 1000
	}
	json.NewEncoder(os.Stdout).Encode(s)
}
