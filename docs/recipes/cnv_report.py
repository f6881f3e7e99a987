"""Report signups, later stages and adjustments to cnv's signed webhooks from Python, standard library only (3.8+).

In Django, the correlation cookie is in request.COOKIES:

    from cnv_report import report_signup

    def signup(request):
        user = create_user(request.POST)
        result = report_signup(
            correlation_token=request.COOKIES.get("cnv_signup_correlation"),
            customer_event_id=str(user.pk), email=user.email, first_name=user.first_name, customer_id=str(user.pk))
        # better: hand the call to your task queue (Celery, RQ, django-q) so the visitor never waits for it
        return redirect("/welcome")

    # Later, from your billing code: a first payment (a flow with the trigger key "paid"), then a refund.
    report_conversion("paid", customer_event_id=invoice.number, customer_id=str(user.pk), value=29.0, currency="EUR")
    adjust_conversion("refund_%s" % refund.id, customer_event_id=invoice.number, type="retract")

(Flask: request.cookies.get(...); any WSGI app: parse environ["HTTP_COOKIE"] with token_from_cookie_header below.)
Settings come from the environment: CNV_WEBHOOK_BASE_URL (an origin, no path), CNV_SITE_KEY, CNV_TRIGGER_KEY,
CNV_WEBHOOK_SECRET (server-side only).

Run it alone:  python3 cnv_report.py --customer-event-id user_42 --email ada@example.com --cookie 'cnv_signup_correlation=…'
               python3 cnv_report.py --call conversion --stage paid --customer-event-id inv_1 --customer-id user_42 \
                 --value 29 --currency EUR
               python3 cnv_report.py --call adjustment --adjustment-id refund_1 --customer-event-id inv_1 --type retract
"""
import argparse, decimal, hashlib, hmac, http.client, json, numbers, os, random, re, sys, time
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
                  value=None, currency=None, customer_id=None):
    """Reports a signup (value and currency optional; customer_id links its later stages). Returns (status, answer)."""
    token = _token(correlation_token)
    return _send(_path("saas-signup", os.environ["CNV_SITE_KEY"], os.environ["CNV_TRIGGER_KEY"]), {
        "correlation_token": token, "customer_event_id": customer_event_id, "email": email, "phone": phone,
        "first_name": first_name, "last_name": last_name, "allow_uncorrelated": token is None,
        "value": value, "currency": currency, "customer_id": customer_id})


def report_conversion(stage_key, customer_event_id, customer_id, value=None, currency=None, occurred_at=None,
                      correlation_token=None):
    """Reports a later stage of the customer (a first payment, a renewal; stage_key is the key of that flow's trigger).
    Its click is found through the signup with the same customer_id. occurred_at: ISO 8601, default now."""
    token = _token(correlation_token)
    return _send(_path("conversion", os.environ["CNV_SITE_KEY"], stage_key), {
        "customer_event_id": customer_event_id, "customer_id": customer_id, "correlation_token": token,
        "value": value, "currency": currency, "occurred_at": occurred_at, "allow_uncorrelated": token is None})


def adjust_conversion(adjustment_id, customer_event_id, type, value=None, currency=None, occurred_at=None):
    """Corrects the conversion a report produced: type "restate" (value and currency: the new total) or "retract"
    (a refund, a cancelled order). adjustment_id dedupes, like customer_event_id."""
    return _send(_path("adjustment", os.environ["CNV_SITE_KEY"]), {
        "adjustment_id": adjustment_id, "customer_event_id": customer_event_id, "type": type,
        "value": value, "currency": currency, "occurred_at": occurred_at})


def _token(value):
    return value if value and TOKEN.match(value) else None


def _path(*parts):
    return "/api/webhook-bridge/" + "/".join(urllib.parse.quote(part, safe="") for part in parts)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib would follow a 301, 302 or 303 as a GET without the body: answer the redirect itself instead (as a 3xx)."""

    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def _answer(raw):
    """The parsed JSON answer, or None when it is not JSON (a proxy's HTML error page, an empty body)."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _json_number(value):
    """A Decimal (Django's DecimalField) or a Fraction as a JSON number; json.dumps refuses them otherwise."""
    if isinstance(value, (decimal.Decimal, numbers.Real)):  # a Decimal is no numbers.Real
        return float(value)
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def _send(path, payload, attempts=4, timeout=5.0):
    """Signs and sends one report; returns (http_status, parsed JSON answer or None). Retries 5xx, 408, 429 and network
    errors. A redirect is returned, not followed (it would change the signed path): set CNV_WEBHOOK_BASE_URL to its target."""
    base = os.environ["CNV_WEBHOOK_BASE_URL"].rstrip("/")
    body = json.dumps(payload, default=_json_number).encode("utf-8")  # serialise once: these exact bytes are signed and sent
    secret = os.environ["CNV_WEBHOOK_SECRET"].encode("utf-8")
    for attempt in range(1, attempts + 1):
        timestamp = str(int(time.time()))  # a fresh signature for every attempt
        signing_string = b"%s.POST.%s.%s" % (timestamp.encode(), path.encode(), body)
        signature = hmac.new(secret, signing_string, hashlib.sha256).hexdigest()
        request = urllib.request.Request(base + path, data=body, method="POST", headers={
            "Content-Type": "application/json", "X-Service-Signature": "t=%s,v1=%s" % (timestamp, signature)})
        retry_after = None
        try:
            with _opener.open(request, timeout=timeout) as response:
                return response.status, _answer(response.read())
        except urllib.error.HTTPError as error:
            status, answer = error.code, _answer(error.read())
            if status not in (408, 429) and status < 500:
                return status, answer  # 4xx: fix the configuration (401: the secret or the clock), do not retry
            retry_after = error.headers.get("Retry-After")
            if attempt == attempts:
                return status, answer
        except (OSError, http.client.HTTPException):  # refused, reset, DNS, timeouts (socket.timeout before 3.10)
            if attempt == attempts:
                raise
        delay = float(retry_after) if retry_after and retry_after.isdigit() else random.uniform(0, 0.5 * 2 ** (attempt - 1))
        time.sleep(min(delay, 30.0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Report a signup, a later stage or an adjustment to cnv.")
    parser.add_argument("--call", choices=["signup", "conversion", "adjustment"], default="signup")
    parser.add_argument("--cookie", default="", help="the signup request's Cookie header")
    parser.add_argument("--customer-event-id", required=True)
    parser.add_argument("--email")
    parser.add_argument("--first-name")
    parser.add_argument("--customer-id")
    parser.add_argument("--value", type=float)
    parser.add_argument("--currency")
    parser.add_argument("--stage", help="conversion: the key of the stage flow's trigger")
    parser.add_argument("--adjustment-id")
    parser.add_argument("--type", choices=["restate", "retract"])
    args = parser.parse_args()
    if args.call == "conversion":
        status, answer = report_conversion(args.stage, args.customer_event_id, args.customer_id, args.value, args.currency)
    elif args.call == "adjustment":
        status, answer = adjust_conversion(args.adjustment_id, args.customer_event_id, args.type, args.value, args.currency)
    else:
        status, answer = report_signup(token_from_cookie_header(args.cookie), args.customer_event_id, email=args.email,
                                       first_name=args.first_name, value=args.value, currency=args.currency,
                                       customer_id=args.customer_id)
    print(json.dumps({"status": status, "body": answer}))
    sys.exit(0 if status == 200 else 1)
