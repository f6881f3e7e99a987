# Report a signup to cnv's signed webhook from Ruby, with the standard library only (Ruby 2.7+).
#
# In Rails, the correlation cookie is in `cookies` (a plain cookie written by cnv's loader, not signed by Rails):
#
#   require_relative "cnv_report"
#
#   class SignupsController < ApplicationController
#     def create
#       user = User.create!(signup_params)
#       CnvReport.report_signup(correlation_token: cookies[:cnv_signup_correlation],
#                               customer_event_id: user.id.to_s, email: user.email, first_name: user.first_name)
#       # better: call it from a job (ActiveJob, Sidekiq) so the visitor never waits for it
#       redirect_to "/welcome"
#     end
#   end
#
# (Rack: CnvReport.token_from_cookie_header(env["HTTP_COOKIE"]).) Settings come from the environment:
# CNV_WEBHOOK_BASE_URL (an origin, no path), CNV_SITE_KEY, CNV_TRIGGER_KEY, CNV_WEBHOOK_SECRET (server-side only).
#
# Run it alone:  ruby cnv_report.rb --customer-event-id user_42 --email ada@example.com --cookie 'cnv_signup_correlation=…'
require "cgi"
require "erb"
require "json"
require "net/http"
require "openssl"
require "optparse"
require "uri"

module CnvReport
  COOKIE = "cnv_signup_correlation"
  TOKEN = /\A[A-Za-z0-9_-]{22}\z/

  # The correlation token of a raw Cookie header, or nil (absent, or not shaped like a token).
  def self.token_from_cookie_header(header)
    value = CGI::Cookie.parse(header.to_s)[COOKIE]&.first
    value if value&.match?(TOKEN)
  end

  # Sends one signed report; returns [http_status, parsed JSON answer]. Retries 5xx, 408, 429 and network errors.
  def self.report_signup(correlation_token:, customer_event_id:, email: nil, phone: nil, first_name: nil, last_name: nil,
                         attempts: 4, timeout: 5)
    base = ENV.fetch("CNV_WEBHOOK_BASE_URL").chomp("/")
    path = "/api/webhook-bridge/saas-signup/#{ERB::Util.url_encode(ENV.fetch("CNV_SITE_KEY"))}/" \
           "#{ERB::Util.url_encode(ENV.fetch("CNV_TRIGGER_KEY"))}"
    token = correlation_token.to_s.match?(TOKEN) ? correlation_token : nil
    # Serialise once: these exact bytes are signed and sent.
    body = JSON.generate(correlation_token: token, customer_event_id: customer_event_id, email: email, phone: phone,
                         first_name: first_name, last_name: last_name, allow_uncorrelated: token.nil?)
    uri = URI(base + path)
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
        answer = response.body.to_s.empty? ? nil : JSON.parse(response.body)
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
end

if $PROGRAM_NAME == __FILE__
  options = { cookie: "" }
  OptionParser.new do |o|
    o.on("--cookie HEADER") { |v| options[:cookie] = v }
    o.on("--customer-event-id ID") { |v| options[:id] = v }
    o.on("--email EMAIL") { |v| options[:email] = v }
    o.on("--first-name NAME") { |v| options[:first_name] = v }
  end.parse!
  abort "--customer-event-id is required" unless options[:id]
  status, answer = CnvReport.report_signup(correlation_token: CnvReport.token_from_cookie_header(options[:cookie]),
                                           customer_event_id: options[:id], email: options[:email],
                                           first_name: options[:first_name])
  puts JSON.generate(status: status, body: answer)
  exit(status == 200 ? 0 : 1)
end
