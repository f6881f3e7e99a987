# Report signups, later stages and adjustments to cnv's signed webhooks from Ruby, standard library only (Ruby 2.7+).
#
# In Rails, the correlation cookie is in `cookies` (a plain cookie written by cnv's loader, not signed by Rails):
#
#   require_relative "cnv_report"
#
#   class SignupsController < ApplicationController
#     def create
#       user = User.create!(signup_params)
#       CnvReport.report_signup(correlation_token: cookies[:cnv_signup_correlation], customer_event_id: user.id.to_s,
#                               email: user.email, first_name: user.first_name, customer_id: user.id.to_s)
#       # better: call it from a job (ActiveJob, Sidekiq) so the visitor never waits for it
#       redirect_to "/welcome"
#     end
#   end
#
#   # Later, from your billing code: a first payment (a flow with the trigger key "paid"), then a refund.
#   CnvReport.report_conversion("paid", customer_event_id: invoice.number, customer_id: user.id.to_s, value: 29.0, currency: "EUR")
#   CnvReport.adjust_conversion(adjustment_id: "refund_#{refund.id}", customer_event_id: invoice.number, type: "retract")
#
# (Rack: CnvReport.token_from_cookie_header(env["HTTP_COOKIE"]).) Settings come from the environment:
# CNV_WEBHOOK_BASE_URL (an origin, no path), CNV_SITE_KEY, CNV_TRIGGER_KEY, CNV_WEBHOOK_SECRET (server-side only).
#
# Run it alone:  ruby cnv_report.rb --customer-event-id user_42 --email ada@example.com --cookie 'cnv_signup_correlation=…'
#                ruby cnv_report.rb --call conversion --stage paid --customer-event-id inv_1 --customer-id user_42 --value 29 --currency EUR
#                ruby cnv_report.rb --call adjustment --adjustment-id refund_1 --customer-event-id inv_1 --type retract
require "erb"
require "json"
require "net/http"
require "openssl"
require "optparse"
require "uri"

module CnvReport
  COOKIE = "cnv_signup_correlation"
  TOKEN = /\A[A-Za-z0-9_-]{22}\z/

  # The correlation token of a raw Cookie header, or nil (absent, or not shaped like a token). Parsed here rather than
  # with CGI::Cookie, which Ruby 3.5/4.0 removed from the standard library.
  def self.token_from_cookie_header(header)
    header.to_s.split(";").each do |pair|
      name, value = pair.strip.split("=", 2)
      next unless name == COOKIE && value
      value = value.strip.delete_prefix('"').delete_suffix('"')
      return value if value.match?(TOKEN)
    end
    nil
  end

  # Reports a signup (value and currency optional; customer_id links its later stages). Returns [status, answer].
  def self.report_signup(correlation_token:, customer_event_id:, email: nil, phone: nil, first_name: nil, last_name: nil,
                         value: nil, currency: nil, customer_id: nil)
    token = token_or_nil(correlation_token)
    send_signed(path("saas-signup", ENV.fetch("CNV_SITE_KEY"), ENV.fetch("CNV_TRIGGER_KEY")),
                { correlation_token: token, customer_event_id: customer_event_id, email: email, phone: phone,
                  first_name: first_name, last_name: last_name, allow_uncorrelated: token.nil?,
                  value: value, currency: currency, customer_id: customer_id })
  end

  # Reports a later stage of the customer (a first payment, a renewal; stage_key is the key of that flow's trigger).
  # Its click is found through the signup with the same customer_id. occurred_at: ISO 8601, default now.
  def self.report_conversion(stage_key, customer_event_id:, customer_id:, value: nil, currency: nil, occurred_at: nil,
                             correlation_token: nil)
    token = token_or_nil(correlation_token)
    send_signed(path("conversion", ENV.fetch("CNV_SITE_KEY"), stage_key),
                { customer_event_id: customer_event_id, customer_id: customer_id, correlation_token: token,
                  value: value, currency: currency, occurred_at: occurred_at, allow_uncorrelated: token.nil? })
  end

  # Corrects the conversion a report produced: type "restate" (value and currency: the new total) or "retract" (a
  # refund, a cancelled order). adjustment_id dedupes, like customer_event_id.
  def self.adjust_conversion(adjustment_id:, customer_event_id:, type:, value: nil, currency: nil, occurred_at: nil)
    send_signed(path("adjustment", ENV.fetch("CNV_SITE_KEY")),
                { adjustment_id: adjustment_id, customer_event_id: customer_event_id, type: type,
                  value: value, currency: currency, occurred_at: occurred_at })
  end

  def self.token_or_nil(value)
    value if value.to_s.match?(TOKEN)
  end

  def self.path(*parts)
    "/api/webhook-bridge/" + parts.map { |part| ERB::Util.url_encode(part) }.join("/")
  end

  # Signs and sends one report; returns [http_status, parsed JSON answer]. Retries 5xx, 408, 429 and network errors.
  def self.send_signed(path, payload, attempts: 4, timeout: 5)
    # A BigDecimal (a Rails decimal column) or a Rational would be generated as a JSON string ("0.299e2"), which the
    # service refuses: send every non-integer number as a Float.
    payload = payload.transform_values { |v| v.is_a?(Numeric) && !v.is_a?(Integer) ? v.to_f : v }
    body = JSON.generate(payload) # serialise once: these exact bytes are signed and sent
    uri = URI(ENV.fetch("CNV_WEBHOOK_BASE_URL").chomp("/") + path)
    (1..attempts).each do |attempt|
      timestamp = Time.now.to_i.to_s # a fresh signature for every attempt
      signature = OpenSSL::HMAC.hexdigest("SHA256", ENV.fetch("CNV_WEBHOOK_SECRET"), "#{timestamp}.POST.#{path}.#{body}")
      request = Net::HTTP::Post.new(uri.request_uri, "Content-Type" => "application/json",
                                                     "X-Service-Signature" => "t=#{timestamp},v1=#{signature}")
      request.body = body
      retry_after = nil
      begin
        response = Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == "https",
                                                       open_timeout: timeout, read_timeout: timeout) { |http| http.request(request) }
        status = response.code.to_i
        answer = parse_answer(response.body)
        # 2xx done; another 4xx is fixed by configuration (401: the secret or the clock), never by retrying.
        return [status, answer] if status < 500 && status != 408 && status != 429
        return [status, answer] if attempt == attempts
        retry_after = response["Retry-After"]
      rescue Timeout::Error, SystemCallError, IOError, SocketError
        raise if attempt == attempts
      end
      delay = retry_after&.match?(/\A\d+\z/) ? retry_after.to_f : rand * 0.5 * 2**(attempt - 1)
      sleep([delay, 30].min)
    end
  end
  # The parsed JSON answer, or nil when it is not JSON (a proxy's HTML error page, an empty body).
  def self.parse_answer(body)
    JSON.parse(body.to_s)
  rescue JSON::ParserError
    nil
  end

  private_class_method :token_or_nil, :path, :send_signed, :parse_answer
end

if $PROGRAM_NAME == __FILE__
  options = { call: "signup", cookie: "" }
  OptionParser.new do |o|
    o.on("--call CALL", %w[signup conversion adjustment]) { |v| options[:call] = v }
    o.on("--cookie HEADER") { |v| options[:cookie] = v }
    o.on("--customer-event-id ID") { |v| options[:id] = v }
    o.on("--email EMAIL") { |v| options[:email] = v }
    o.on("--first-name NAME") { |v| options[:first_name] = v }
    o.on("--customer-id ID") { |v| options[:customer_id] = v }
    o.on("--value VALUE", Float) { |v| options[:value] = v }
    o.on("--currency CODE") { |v| options[:currency] = v }
    o.on("--stage KEY") { |v| options[:stage] = v }
    o.on("--adjustment-id ID") { |v| options[:adjustment_id] = v }
    o.on("--type TYPE", %w[restate retract]) { |v| options[:type] = v }
  end.parse!
  abort "--customer-event-id is required" unless options[:id]
  status, answer =
    case options[:call]
    when "conversion"
      CnvReport.report_conversion(options[:stage], customer_event_id: options[:id], customer_id: options[:customer_id],
                                                   value: options[:value], currency: options[:currency])
    when "adjustment"
      CnvReport.adjust_conversion(adjustment_id: options[:adjustment_id], customer_event_id: options[:id],
                                  type: options[:type], value: options[:value], currency: options[:currency])
    else
      CnvReport.report_signup(correlation_token: CnvReport.token_from_cookie_header(options[:cookie]),
                              customer_event_id: options[:id], email: options[:email], first_name: options[:first_name],
                              value: options[:value], currency: options[:currency], customer_id: options[:customer_id])
    end
  puts JSON.generate(status: status, body: answer)
  exit(status == 200 ? 0 : 1)
end
