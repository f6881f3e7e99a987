// Report signups, later stages and adjustments to cnv's signed webhooks from Go, standard library only (Go 1.19+).
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
//				CustomerEventID: user.ID, Email: user.Email, CustomerID: user.ID}); err != nil || status != 200 {
//				log.Printf("cnv report: %d %v %v", status, answer, err)
//			}
//		}()
//		http.Redirect(w, r, "/welcome", http.StatusSeeOther)
//	}
//
//	// Later, from your billing code: a first payment (a flow with the trigger key "paid"), then a refund.
//	total := 29.0
//	ReportConversion(ctx, Conversion{StageKey: "paid", CustomerEventID: invoice.Number, CustomerID: user.ID, Value: &total, Currency: "EUR"})
//	AdjustConversion(ctx, Adjustment{AdjustmentID: "refund_" + refund.ID, CustomerEventID: invoice.Number, Type: "retract"})
//
// Settings come from the environment: CNV_WEBHOOK_BASE_URL (an origin, no path), CNV_SITE_KEY, CNV_TRIGGER_KEY,
// CNV_WEBHOOK_SECRET (server-side only).
//
// Run it alone:
//
//	go run cnv_report.go -customer-event-id user_42 -email ada@example.com -cookie 'cnv_signup_correlation=…'
//	go run cnv_report.go -call conversion -stage paid -customer-event-id inv_1 -customer-id user_42 -value 29 -currency EUR
//	go run cnv_report.go -call adjustment -adjustment-id refund_1 -customer-event-id inv_1 -type retract
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
	"sync"
	"time"
)

const cookieName = "cnv_signup_correlation"

// jitter is seeded: before Go 1.20 the global math/rand source starts with the same seed in every process, so every
// backend instance would wait exactly as long as the others before retrying. A rand.Rand is not safe for concurrent
// use (reports run in goroutines), hence the mutex.
var (
	jitterMu sync.Mutex
	jitter   = rand.New(rand.NewSource(time.Now().UnixNano()))
)

// jitterDelay is a random wait in [0, ceiling).
func jitterDelay(ceiling time.Duration) time.Duration {
	jitterMu.Lock()
	defer jitterMu.Unlock()
	return time.Duration(jitter.Int63n(int64(ceiling)))
}

var tokenShape = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

// Signup is a signup report; empty strings are sent as null, and a nil Value as none. CustomerID links later stages.
type Signup struct {
	CorrelationToken, CustomerEventID, Email, Phone, FirstName, LastName, CustomerID, Currency string
	Value                                                                                      *float64
}

// Conversion is a later stage of the customer (a first payment, a renewal): StageKey is the key of that flow's trigger,
// and the click is found through the signup with the same CustomerID. OccurredAt: ISO 8601, default now.
type Conversion struct {
	StageKey, CustomerEventID, CustomerID, CorrelationToken, Currency, OccurredAt string
	Value                                                                         *float64
}

// Adjustment corrects the conversion a report produced: Type "restate" (Value and Currency: the new total) or
// "retract" (a refund, a cancelled order). AdjustmentID dedupes, like CustomerEventID.
type Adjustment struct {
	AdjustmentID, CustomerEventID, Type, Currency, OccurredAt string
	Value                                                     *float64
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

func validToken(s string) *string {
	if !tokenShape.MatchString(s) {
		return nil
	}
	return &s
}

func webhookPath(parts ...string) string {
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	return "/api/webhook-bridge/" + strings.Join(parts, "/")
}

// ReportSignup sends a signup report; it returns the HTTP status and the decoded answer.
func ReportSignup(ctx context.Context, s Signup) (int, map[string]any, error) {
	token := validToken(s.CorrelationToken)
	return send(ctx, webhookPath("saas-signup", os.Getenv("CNV_SITE_KEY"), os.Getenv("CNV_TRIGGER_KEY")), map[string]any{
		"correlation_token": token, "customer_event_id": s.CustomerEventID, "email": nullable(s.Email),
		"phone": nullable(s.Phone), "first_name": nullable(s.FirstName), "last_name": nullable(s.LastName),
		"allow_uncorrelated": token == nil, "value": s.Value, "currency": nullable(s.Currency), "customer_id": nullable(s.CustomerID),
	})
}

// ReportConversion sends a later stage's report.
func ReportConversion(ctx context.Context, c Conversion) (int, map[string]any, error) {
	token := validToken(c.CorrelationToken)
	return send(ctx, webhookPath("conversion", os.Getenv("CNV_SITE_KEY"), c.StageKey), map[string]any{
		"customer_event_id": c.CustomerEventID, "customer_id": c.CustomerID, "correlation_token": token,
		"value": c.Value, "currency": nullable(c.Currency), "occurred_at": nullable(c.OccurredAt), "allow_uncorrelated": token == nil,
	})
}

// AdjustConversion sends an adjustment.
func AdjustConversion(ctx context.Context, a Adjustment) (int, map[string]any, error) {
	return send(ctx, webhookPath("adjustment", os.Getenv("CNV_SITE_KEY")), map[string]any{
		"adjustment_id": a.AdjustmentID, "customer_event_id": a.CustomerEventID, "type": a.Type,
		"value": a.Value, "currency": nullable(a.Currency), "occurred_at": nullable(a.OccurredAt),
	})
}

// send signs and sends one report. It retries 5xx, 408, 429 and network errors, signing every attempt afresh.
func send(ctx context.Context, path string, payload map[string]any) (int, map[string]any, error) {
	// Serialise once: these exact bytes are signed and sent.
	body, err := json.Marshal(payload)
	if err != nil {
		return 0, nil, err
	}
	endpoint := strings.TrimRight(os.Getenv("CNV_WEBHOOK_BASE_URL"), "/") + path
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const attempts = 4
	for attempt := 1; ; attempt++ {
		timestamp := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(os.Getenv("CNV_WEBHOOK_SECRET")))
		mac.Write([]byte(timestamp + ".POST." + path + "."))
		mac.Write(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Signature", "t="+timestamp+",v1="+hex.EncodeToString(mac.Sum(nil)))
		delay := jitterDelay(500 * time.Millisecond << (attempt - 1))
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
	call := flag.String("call", "signup", "signup, conversion or adjustment")
	cookie := flag.String("cookie", "", "the signup request's Cookie header")
	id := flag.String("customer-event-id", "", "your id of the conversion (required)")
	email := flag.String("email", "", "the email address")
	firstName := flag.String("first-name", "", "the first name")
	customerID := flag.String("customer-id", "", "your id of the customer")
	currency := flag.String("currency", "", "ISO 4217 code of the value")
	stage := flag.String("stage", "", "conversion: the key of the stage flow's trigger")
	adjustmentID := flag.String("adjustment-id", "", "adjustment: your id of it")
	kind := flag.String("type", "", "adjustment: restate or retract")
	var value *float64
	flag.Func("value", "the conversion's value", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		value = &v
		return err
	})
	flag.Parse()
	if *id == "" {
		fmt.Fprintln(os.Stderr, "-customer-event-id is required")
		os.Exit(2)
	}
	ctx := context.Background()
	var status int
	var answer map[string]any
	var err error
	switch *call {
	case "conversion":
		status, answer, err = ReportConversion(ctx, Conversion{StageKey: *stage, CustomerEventID: *id, CustomerID: *customerID, Value: value, Currency: *currency})
	case "adjustment":
		status, answer, err = AdjustConversion(ctx, Adjustment{AdjustmentID: *adjustmentID, CustomerEventID: *id, Type: *kind, Value: value, Currency: *currency})
	default:
		status, answer, err = ReportSignup(ctx, Signup{CorrelationToken: TokenFromCookieHeader(*cookie), CustomerEventID: *id,
			Email: *email, FirstName: *firstName, CustomerID: *customerID, Value: value, Currency: *currency})
	}
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
