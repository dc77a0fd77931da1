// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A loopback stand-in for the fleet backends perch push talks to (tests/push.sh), built from
// Go's standard library alone (no modules to fetch). It listens on 127.0.0.1 at a free port,
// writes the port to DIR/port, and for each request saves what a backend would take:
//
//	POST /ingest?...       (Pyroscope) the multipart field "profile" to DIR/N.pb.gz and the
//	                       query to DIR/N.query; 400 when the field or name/from/until is missing
//	POST /profiles/writeraw (Parca)   the JSON body's series[0].samples[0].rawProfile, base64
//	                       decoded, to DIR/N.pb.gz and the __name__ label to DIR/N.query
//	POST /v1development/profiles (OTLP/HTTP) the body, gunzipped, to DIR/N.otlp and its
//	                       Content-Type and Content-Encoding to DIR/N.query; 415 for another
//	                       content type, 400 for a body that is not gzip; the answer an empty
//	                       ExportProfilesServiceResponse (application/x-protobuf)
//	POST /fail              answers 503 with a body, for the error path
//	POST /flaky/v1development/profiles  as the OTLP path, but the 3rd and 4th requests to it
//	                       get a 503 (perch agent's retry, then its dropped interval)
//
// and hostile servers, each on the raw connection once the request is read:
//
//	POST /continue500       "100 Continue", then a 500, then the connection closed
//	POST /keepopen          a 200 with its Content-Length, then the connection held open 30 s
//	POST /drip              a 200's head one byte every 1.5 s, for 60 s
//
// N counts requests from 1. Other paths get 404.
//
//	go run tests/push/receiver.go DIR
package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

var (
	dir    string
	mu     sync.Mutex
	n      int
	flakyN int
)

func next() string {
	mu.Lock()
	defer mu.Unlock()
	n++
	return filepath.Join(dir, fmt.Sprint(n))
}

func ingest(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method != http.MethodPost || q.Get("name") == "" || q.Get("from") == "" || q.Get("until") == "" {
		http.Error(w, "name, from and until are required", http.StatusBadRequest)
		return
	}
	f, _, err := r.FormFile("profile")
	if err != nil {
		http.Error(w, "no profile field: "+err.Error(), http.StatusBadRequest)
		return
	}
	defer f.Close()
	body, err := io.ReadAll(f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	base := next()
	os.WriteFile(base+".query", []byte(r.URL.RawQuery+"\n"), 0o600)
	os.WriteFile(base+".pb.gz", body, 0o600)
}

type writeRaw struct {
	Series []struct {
		Labels struct {
			Labels []struct{ Name, Value string }
		}
		Samples []struct {
			RawProfile []byte `json:"rawProfile"`
		}
	}
}

func writeraw(w http.ResponseWriter, r *http.Request) {
	var req writeRaw
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Series) != 1 ||
		len(req.Series[0].Samples) != 1 || len(req.Series[0].Labels.Labels) == 0 {
		http.Error(w, fmt.Sprint("bad WriteRaw request: ", err), http.StatusBadRequest)
		return
	}
	base := next()
	l := req.Series[0].Labels.Labels[0]
	os.WriteFile(base+".query", []byte(l.Name+"="+l.Value+"\n"), 0o600)
	os.WriteFile(base+".pb.gz", req.Series[0].Samples[0].RawProfile, 0o600)
	w.Write([]byte("{}"))
}

func otlp(w http.ResponseWriter, r *http.Request) {
	ct, enc := r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding")
	if r.Method != http.MethodPost || ct != "application/x-protobuf" {
		http.Error(w, "want a POST of application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = r.Body
	if enc == "gzip" {
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "not gzip: "+err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	base := next()
	os.WriteFile(base+".query", []byte("content-type="+ct+"&content-encoding="+enc+"\n"), 0o600)
	os.WriteFile(base+".otlp", data, 0o600)
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// raw answers the request on its connection, as a hostile server would: reply, then hold
// the connection open for hold, writing drip a byte at a time every 1.5 s first.
func raw(reply, drip string, hold time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.Write([]byte(reply))
		for i := 0; i < len(drip); i++ {
			time.Sleep(1500 * time.Millisecond)
			if _, err := conn.Write([]byte{drip[i]}); err != nil {
				return
			}
		}
		conn.SetReadDeadline(time.Now().Add(hold))
		io.Copy(io.Discard, conn) // until perch closes, or hold passes
	}
}

func main() {
	dir = os.Args[1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/ingest", ingest)
	http.HandleFunc("/profiles/writeraw", writeraw)
	http.HandleFunc("/v1development/profiles", otlp)
	http.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Error(w, "ingester unavailable", http.StatusServiceUnavailable)
	})
	http.HandleFunc("/flaky/v1development/profiles", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		flakyN++
		k := flakyN
		mu.Unlock()
		if k == 3 || k == 4 {
			io.Copy(io.Discard, r.Body)
			http.Error(w, "ingester unavailable", http.StatusServiceUnavailable)
			return
		}
		otlp(w, r)
	})
	http.HandleFunc("/continue500", raw("HTTP/1.1 100 Continue\r\n\r\n"+
		"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 10\r\n\r\nrejected\r\n", "", 0))
	http.HandleFunc("/keepopen", raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "", 30*time.Second))
	http.HandleFunc("/drip", raw("", "HTTP/1.1 200 OK\r\nX-Slow: 0123456789012345678901234567890123456789\r\n\r\n",
		0))
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	os.WriteFile(filepath.Join(dir, "port.tmp"), []byte(port+"\n"), 0o600)
	os.Rename(filepath.Join(dir, "port.tmp"), filepath.Join(dir, "port"))
	http.Serve(ln, nil)
}
