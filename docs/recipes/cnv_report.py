"""Report a signup to cnv's signed webhook from Python, with the standard library only (Python 3.8+).

In Django, the correlation cookie is in request.COOKIES:

    from cnv_report import report_signup

    def signup(request):
        user = create_user(request.POST)
        result = report_signup(
            correlation_token=request.COOKIES.get("cnv_signup_correlation"),
            customer_event_id=str(user.pk), email=user.email, first_name=user.first_name)
        # better: hand the call to your task queue (Celery, RQ, django-q) so the visitor never waits for it
        return redirect("/welcome")

(Flask: request.cookies.get(...); any WSGI app: parse environ["HTTP_COOKIE"] with token_from_cookie_header below.)
Settings come from the environment: CNV_WEBHOOK_BASE_URL (an origin, no path), CNV_SITE_KEY, CNV_TRIGGER_KEY,
CNV_WEBHOOK_SECRET (server-side only).

Run it alone:  python3 cnv_report.py --customer-event-id user_42 --email ada@example.com --cookie 'cnv_signup_correlation=…'
"""
import argparse, hashlib, hmac, json, os, random, re, sys, time
import urllib.error, urllib.parse, urllib.request
from http.cookies import SimpleCookie

COOKIE = "cnv_signup_correlation"
TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")


def token_from_cookie_header(header):
    """The correlation token of a raw Cookie header, or None (absent, or not shaped like a token)."""
    cookies = SimpleCookie()
    try:
        cookies.load(header or "")
    except Exception:
        return None
    value = cookies[COOKIE].value if COOKIE in cookies else None
    return value if value and TOKEN.match(value) else None


def report_signup(correlation_token, customer_event_id, email=None, phone=None, first_name=None, last_name=None,
                  attempts=4, timeout=5.0):
    """Sends one signed report; returns (http_status, parsed JSON answer). Retries 5xx, 408, 429 and network errors."""
    base = os.environ["CNV_WEBHOOK_BASE_URL"].rstrip("/")
    path = "/api/webhook-bridge/saas-signup/%s/%s" % (
        urllib.parse.quote(os.environ["CNV_SITE_KEY"], safe=""), urllib.parse.quote(os.environ["CNV_TRIGGER_KEY"], safe=""))
    token = correlation_token if correlation_token and TOKEN.match(correlation_token) else None
    body = json.dumps({
        "correlation_token": token, "customer_event_id": customer_event_id, "email": email, "phone": phone,
        "first_name": first_name, "last_name": last_name, "allow_uncorrelated": token is None,
    }).encode("utf-8")  # serialise once: these exact bytes are signed and sent
    secret = os.environ["CNV_WEBHOOK_SECRET"].encode("utf-8")
    for attempt in range(1, attempts + 1):
        timestamp = str(int(time.time()))  # a fresh signature for every attempt
        signing_string = b"%s.POST.%s.%s" % (timestamp.encode(), path.encode(), body)
        signature = hmac.new(secret, signing_string, hashlib.sha256).hexdigest()
        request = urllib.request.Request(base + path, data=body, method="POST", headers={
            "Content-Type": "application/json", "X-Service-Signature": "t=%s,v1=%s" % (timestamp, signature)})
        retry_after = None
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            status, answer = error.code, json.loads(error.read() or b"null")
            if status not in (408, 429) and status < 500:
                return status, answer  # 4xx: fix the configuration (401: the secret or the clock), do not retry
            retry_after = error.headers.get("Retry-After")
            if attempt == attempts:
                return status, answer
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            if attempt == attempts:
                raise
        delay = float(retry_after) if retry_after and retry_after.isdigit() else random.uniform(0, 0.5 * 2 ** (attempt - 1))
        time.sleep(min(delay, 30.0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Report a signup to cnv.")
    parser.add_argument("--cookie", default="", help="the signup request's Cookie header")
    parser.add_argument("--customer-event-id", required=True)
    parser.add_argument("--email")
    parser.add_argument("--first-name")
    args = parser.parse_args()
    status, answer = report_signup(token_from_cookie_header(args.cookie), args.customer_event_id,
                                   email=args.email, first_name=args.first_name)
    print(json.dumps({"status": status, "body": answer}))
    sys.exit(0 if status == 200 else 1)
