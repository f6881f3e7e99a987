<?php
// Report signups, later stages and adjustments to cnv's signed webhooks from PHP, standard library only (PHP 7.4+;
// curl not needed).
//
// In Laravel, the correlation cookie is $request->cookie('cnv_signup_correlation'). Laravel decrypts every cookie by
// default and drops the ones it did not encrypt: list the cookie in the EncryptCookies middleware's $except
// (app/Http/Middleware/EncryptCookies.php; Laravel 11+: $middleware->encryptCookies(except: [...]) in bootstrap/app.php):
//
//     protected $except = ['cnv_signup_correlation'];
//
//     public function store(Request $request) {
//         $user = User::create($request->validated());
//         cnv_report_signup($request->cookie('cnv_signup_correlation'), (string) $user->id, $user->email, null,
//                           $user->first_name, null, null, null, (string) $user->id);
//         // better: dispatch a queued job (or dispatch(...)->afterResponse()) so the visitor never waits for it
//         return redirect('/welcome');
//     }
//
//     // Later, from your billing code: a first payment (a flow with the trigger key "paid"), then a refund.
//     cnv_report_conversion('paid', $invoice->number, (string) $user->id, 29.0, 'EUR');
//     cnv_adjust_conversion("refund_{$refund->id}", $invoice->number, 'retract');
//
// (Plain PHP: $_COOKIE['cnv_signup_correlation'].) Settings come from the environment: CNV_WEBHOOK_BASE_URL (an origin,
// no path), CNV_SITE_KEY, CNV_TRIGGER_KEY, CNV_WEBHOOK_SECRET (server-side only).
//
// Run it alone:  php cnv_report.php --customer-event-id=user_42 --email=ada@example.com --cookie='cnv_signup_correlation=…'
//                php cnv_report.php --call=conversion --stage=paid --customer-event-id=inv_1 --customer-id=user_42 --value=29 --currency=EUR
//                php cnv_report.php --call=adjustment --adjustment-id=refund_1 --customer-event-id=inv_1 --type=retract

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

/** Reports a signup (value and currency optional; $customerId links its later stages). Returns [status, answer]. */
function cnv_report_signup(?string $correlationToken, string $customerEventId, ?string $email = null, ?string $phone = null,
                           ?string $firstName = null, ?string $lastName = null, ?float $value = null,
                           ?string $currency = null, ?string $customerId = null): array {
    $token = cnv_token_or_null($correlationToken);
    return cnv_send(cnv_path('saas-signup', getenv('CNV_SITE_KEY'), getenv('CNV_TRIGGER_KEY')), [
        'correlation_token' => $token, 'customer_event_id' => $customerEventId, 'email' => $email, 'phone' => $phone,
        'first_name' => $firstName, 'last_name' => $lastName, 'allow_uncorrelated' => $token === null,
        'value' => $value, 'currency' => $currency, 'customer_id' => $customerId,
    ]);
}

/**
 * Reports a later stage of the customer (a first payment, a renewal; $stageKey is the key of that flow's trigger). Its
 * click is found through the signup with the same customer id. $occurredAt: ISO 8601, default now.
 */
function cnv_report_conversion(string $stageKey, string $customerEventId, string $customerId, ?float $value = null,
                               ?string $currency = null, ?string $occurredAt = null, ?string $correlationToken = null): array {
    $token = cnv_token_or_null($correlationToken);
    return cnv_send(cnv_path('conversion', getenv('CNV_SITE_KEY'), $stageKey), [
        'customer_event_id' => $customerEventId, 'customer_id' => $customerId, 'correlation_token' => $token,
        'value' => $value, 'currency' => $currency, 'occurred_at' => $occurredAt, 'allow_uncorrelated' => $token === null,
    ]);
}

/**
 * Corrects the conversion a report produced: $type 'restate' ($value and $currency: the new total) or 'retract' (a
 * refund, a cancelled order). $adjustmentId dedupes, like the customer event id.
 */
function cnv_adjust_conversion(string $adjustmentId, string $customerEventId, string $type, ?float $value = null,
                               ?string $currency = null, ?string $occurredAt = null): array {
    return cnv_send(cnv_path('adjustment', getenv('CNV_SITE_KEY')), [
        'adjustment_id' => $adjustmentId, 'customer_event_id' => $customerEventId, 'type' => $type,
        'value' => $value, 'currency' => $currency, 'occurred_at' => $occurredAt,
    ]);
}

function cnv_token_or_null(?string $value): ?string {
    return ($value !== null && preg_match(CNV_TOKEN, $value)) ? $value : null;
}

function cnv_path(string ...$parts): string {
    return '/api/webhook-bridge/' . implode('/', array_map('rawurlencode', $parts));
}

/** Signs and sends one report; returns [http_status, decoded JSON answer]. Retries 5xx, 408, 429 and network errors. */
function cnv_send(string $path, array $payload, int $attempts = 4, float $timeout = 5.0): array {
    $url = rtrim(getenv('CNV_WEBHOOK_BASE_URL'), '/') . $path;
    // Serialise once: these exact bytes are signed and sent.
    $body = json_encode($payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR);
    for ($attempt = 1; $attempt <= $attempts; $attempt++) {
        $timestamp = (string) time(); // a fresh signature for every attempt
        $signature = hash_hmac('sha256', "$timestamp.POST.$path.$body", getenv('CNV_WEBHOOK_SECRET'));
        $context = stream_context_create(['http' => [
            'method' => 'POST', 'content' => $body, 'timeout' => $timeout, 'ignore_errors' => true, 'follow_location' => 0,
            'header' => "Content-Type: application/json\r\nX-Service-Signature: t=$timestamp,v1=$signature\r\n",
        ]]);
        // fopen and the stream's own headers, not file_get_contents and $http_response_header: PHP 8.5 deprecates that
        // variable, and it keeps the previous attempt's headers when an attempt gets no answer at all.
        $stream = @fopen($url, 'r', false, $context);
        $headers = $stream ? (stream_get_meta_data($stream)['wrapper_data'] ?? []) : [];
        $answer = $stream ? stream_get_contents($stream) : false;
        if ($stream) fclose($stream);
        $status = 0;
        $retryAfter = null;
        foreach ($headers as $line) {
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
    $o = getopt('', ['call:', 'cookie:', 'customer-event-id:', 'email:', 'first-name:', 'customer-id:', 'value:', 'currency:',
                     'stage:', 'adjustment-id:', 'type:']);
    if (!isset($o['customer-event-id'])) { fwrite(STDERR, "--customer-event-id is required\n"); exit(2); }
    $value = isset($o['value']) ? (float) $o['value'] : null;
    switch ($o['call'] ?? 'signup') {
        case 'conversion':
            [$status, $answer] = cnv_report_conversion($o['stage'], $o['customer-event-id'], $o['customer-id'], $value, $o['currency'] ?? null);
            break;
        case 'adjustment':
            [$status, $answer] = cnv_adjust_conversion($o['adjustment-id'], $o['customer-event-id'], $o['type'], $value, $o['currency'] ?? null);
            break;
        default:
            [$status, $answer] = cnv_report_signup(cnv_token_from_cookie_header($o['cookie'] ?? ''), $o['customer-event-id'],
                $o['email'] ?? null, null, $o['first-name'] ?? null, null, $value, $o['currency'] ?? null, $o['customer-id'] ?? null);
    }
    echo json_encode(['status' => $status, 'body' => $answer], JSON_UNESCAPED_SLASHES), "\n";
    exit($status === 200 ? 0 : 1);
}
