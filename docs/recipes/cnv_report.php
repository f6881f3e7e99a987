<?php
// Report a signup to cnv's signed webhook from PHP, with the standard library only (PHP 7.4+; curl not needed).
//
// In Laravel, the correlation cookie is $request->cookie('cnv_signup_correlation'). Laravel decrypts every cookie by
// default and drops the ones it did not encrypt: list the cookie in the EncryptCookies middleware's $except
// (app/Http/Middleware/EncryptCookies.php; Laravel 11+: $middleware->encryptCookies(except: [...]) in bootstrap/app.php):
//
//     protected $except = ['cnv_signup_correlation'];
//
//     public function store(Request $request) {
//         $user = User::create($request->validated());
//         cnv_report_signup($request->cookie('cnv_signup_correlation'), (string) $user->id, $user->email, null, $user->first_name);
//         // better: dispatch a queued job (or dispatch(...)->afterResponse()) so the visitor never waits for it
//         return redirect('/welcome');
//     }
//
// (Plain PHP: $_COOKIE['cnv_signup_correlation'].) Settings come from the environment: CNV_WEBHOOK_BASE_URL (an origin,
// no path), CNV_SITE_KEY, CNV_TRIGGER_KEY, CNV_WEBHOOK_SECRET (server-side only).
//
// Run it alone:  php cnv_report.php --customer-event-id=user_42 --email=ada@example.com --cookie='cnv_signup_correlation=…'

const CNV_COOKIE = 'cnv_signup_correlation';
const CNV_TOKEN = '/\A[A-Za-z0-9_-]{22}\z/';

/** The correlation token of a raw Cookie header, or null (absent, or not shaped like a token). */
function cnv_token_from_cookie_header(?string $header): ?string {
    foreach (explode(';', (string) $header) as $pair) {
        $parts = explode('=', trim($pair), 2);
        if (count($parts) === 2 && $parts[0] === CNV_COOKIE) {
            $value = urldecode(trim($parts[1], '"'));
            return preg_match(CNV_TOKEN, $value) ? $value : null;
        }
    }
    return null;
}

/** Sends one signed report; returns [http_status, decoded JSON answer]. Retries 5xx, 408, 429 and network errors. */
function cnv_report_signup(?string $correlationToken, string $customerEventId, ?string $email = null, ?string $phone = null,
                           ?string $firstName = null, ?string $lastName = null, int $attempts = 4, float $timeout = 5.0): array {
    $base = rtrim(getenv('CNV_WEBHOOK_BASE_URL'), '/');
    $path = '/api/webhook-bridge/saas-signup/' . rawurlencode(getenv('CNV_SITE_KEY')) . '/' . rawurlencode(getenv('CNV_TRIGGER_KEY'));
    $token = ($correlationToken !== null && preg_match(CNV_TOKEN, $correlationToken)) ? $correlationToken : null;
    // Serialise once: these exact bytes are signed and sent.
    $body = json_encode([
        'correlation_token' => $token, 'customer_event_id' => $customerEventId, 'email' => $email, 'phone' => $phone,
        'first_name' => $firstName, 'last_name' => $lastName, 'allow_uncorrelated' => $token === null,
    ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    for ($attempt = 1; $attempt <= $attempts; $attempt++) {
        $timestamp = (string) time(); // a fresh signature for every attempt
        $signature = hash_hmac('sha256', "$timestamp.POST.$path.$body", getenv('CNV_WEBHOOK_SECRET'));
        $context = stream_context_create(['http' => [
            'method' => 'POST', 'content' => $body, 'timeout' => $timeout, 'ignore_errors' => true, 'follow_location' => 0,
            'header' => "Content-Type: application/json\r\nX-Service-Signature: t=$timestamp,v1=$signature\r\n",
        ]]);
        $answer = @file_get_contents($base . $path, false, $context);
        $status = 0;
        $retryAfter = null;
        foreach ($http_response_header ?? [] as $line) {
            if (preg_match('#^HTTP/\S+ (\d{3})#', $line, $m)) $status = (int) $m[1];
            if (preg_match('/^Retry-After:\s*(\d+)\s*$/i', $line, $m)) $retryAfter = (int) $m[1];
        }
        $decoded = $answer === false || $answer === '' ? null : json_decode($answer, true);
        // 2xx done; another 4xx is fixed by configuration (401: the secret or the clock), never by retrying.
        if ($status !== 0 && $status < 500 && $status !== 408 && $status !== 429) return [$status, $decoded];
        if ($attempt === $attempts) {
            if ($status === 0) throw new RuntimeException('cnv webhook unreachable');
            return [$status, $decoded];
        }
        $delay = $retryAfter ?? (mt_rand() / mt_getrandmax()) * 0.5 * 2 ** ($attempt - 1);
        usleep((int) (min($delay, 30) * 1e6));
    }
}

if (PHP_SAPI === 'cli' && realpath($argv[0] ?? '') === __FILE__) {
    $options = getopt('', ['cookie:', 'customer-event-id:', 'email:', 'first-name:']);
    if (!isset($options['customer-event-id'])) { fwrite(STDERR, "--customer-event-id is required\n"); exit(2); }
    [$status, $answer] = cnv_report_signup(cnv_token_from_cookie_header($options['cookie'] ?? ''), $options['customer-event-id'],
                                           $options['email'] ?? null, null, $options['first-name'] ?? null);
    echo json_encode(['status' => $status, 'body' => $answer], JSON_UNESCAPED_SLASHES), "\n";
    exit($status === 200 ? 0 : 1);
}
