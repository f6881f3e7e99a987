// Report a signup to cnv's signed webhook from Go, with the standard library only (Go 1.19+).
//
// With net/http, the correlation cookie is r.Cookie("cnv_signup_correlation"):
//
//	func signup(w http.ResponseWriter, r *http.Request) {
//		user := createUser(r)
//		token := ""
//		if c, err := r.Cookie("cnv_signup_correlation"); err == nil {
//			token = c.Value
//		}
//		go func() { // the visitor never waits for the report (or hand it to your job queue)
//			if status, answer, err := ReportSignup(context.Background(), Signup{CorrelationToken: token,
//				CustomerEventID: user.ID, Email: user.Email}); err != nil || status != 200 {
//				log.Printf("cnv report: %d %v %v", status, answer, err)
//			}
//		}()
//		http.Redirect(w, r, "/welcome", http.StatusSeeOther)
//	}
//
// Settings come from the environment: CNV_WEBHOOK_BASE_URL (an origin, no path), CNV_SITE_KEY, CNV_TRIGGER_KEY,
// CNV_WEBHOOK_SECRET (server-side only).
//
// Run it alone:  go run cnv_report.go -customer-event-id user_42 -email ada@example.com -cookie 'cnv_signup_correlation=…'
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const cookieName = "cnv_signup_correlation"

var tokenShape = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

// Signup is what a report carries; empty strings are sent as null.
type Signup struct {
	CorrelationToken, CustomerEventID, Email, Phone, FirstName, LastName string
}

// TokenFromCookieHeader returns the correlation token of a raw Cookie header, or "" (absent, or not shaped like a token).
func TokenFromCookieHeader(header string) string {
	request := http.Request{Header: http.Header{"Cookie": {header}}}
	if c, err := request.Cookie(cookieName); err == nil && tokenShape.MatchString(c.Value) {
		return c.Value
	}
	return ""
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ReportSignup sends one signed report; it returns the HTTP status and the decoded answer. It retries 5xx, 408, 429
// and network errors, signing every attempt afresh.
func ReportSignup(ctx context.Context, s Signup) (int, map[string]any, error) {
	base := strings.TrimRight(os.Getenv("CNV_WEBHOOK_BASE_URL"), "/")
	path := "/api/webhook-bridge/saas-signup/" + url.PathEscape(os.Getenv("CNV_SITE_KEY")) + "/" + url.PathEscape(os.Getenv("CNV_TRIGGER_KEY"))
	token := nullable(s.CorrelationToken)
	if token != nil && !tokenShape.MatchString(*token) {
		token = nil
	}
	// Serialise once: these exact bytes are signed and sent.
	body, err := json.Marshal(map[string]any{
		"correlation_token": token, "customer_event_id": s.CustomerEventID, "email": nullable(s.Email),
		"phone": nullable(s.Phone), "first_name": nullable(s.FirstName), "last_name": nullable(s.LastName),
		"allow_uncorrelated": token == nil,
	})
	if err != nil {
		return 0, nil, err
	}
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const attempts = 4
	for attempt := 1; ; attempt++ {
		timestamp := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(os.Getenv("CNV_WEBHOOK_SECRET")))
		mac.Write([]byte(timestamp + ".POST." + path + "."))
		mac.Write(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Signature", "t="+timestamp+",v1="+hex.EncodeToString(mac.Sum(nil)))
		delay := time.Duration(rand.Int63n(int64(500*time.Millisecond) << (attempt - 1)))
		res, err := client.Do(req)
		if err != nil {
			if attempt == attempts {
				return 0, nil, err
			}
		} else {
			var answer map[string]any
			_ = json.NewDecoder(res.Body).Decode(&answer)
			res.Body.Close()
			retry := res.StatusCode >= 500 || res.StatusCode == 408 || res.StatusCode == 429
			// 2xx done; another 4xx is fixed by configuration (401: the secret or the clock), never by retrying.
			if !retry || attempt == attempts {
				return res.StatusCode, answer, nil
			}
			if seconds, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
				delay = time.Duration(seconds) * time.Second
			}
		}
		if delay > 30*time.Second {
			delay = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func main() {
	cookie := flag.String("cookie", "", "the signup request's Cookie header")
	id := flag.String("customer-event-id", "", "your id of the signup (required)")
	email := flag.String("email", "", "the email address")
	firstName := flag.String("first-name", "", "the first name")
	flag.Parse()
	if *id == "" {
		fmt.Fprintln(os.Stderr, "-customer-event-id is required")
		os.Exit(2)
	}
	status, answer, err := ReportSignup(context.Background(), Signup{
		CorrelationToken: TokenFromCookieHeader(*cookie), CustomerEventID: *id, Email: *email, FirstName: *firstName})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, _ := json.Marshal(map[string]any{"status": status, "body": answer})
	fmt.Println(string(out))
	if status != 200 {
		os.Exit(1)
	}
}
