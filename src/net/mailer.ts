import nodemailer from 'nodemailer'

export interface Mail {
  to: string
  subject: string
  text: string
}

/** Sends the service's few e-mails (invitations, password resets); `enabled` is false without CAIRN_SMTP_URL. */
export interface Mailer {
  readonly enabled: boolean
  send(mail: Mail): Promise<void>
  close(): void
}

/**
 * A mailer for `smtp://` or `smtps://user:pass@host:port` (nodemailer: STARTTLS when the server offers it on
 * smtp://, TLS from the start on smtps://). Without a URL, nothing is sent and links are only shown to the admin.
 */
export function createMailer(options: { smtpUrl?: string; from: string }): Mailer {
  if (!options.smtpUrl) {
    return { enabled: false, async send() { throw new Error('e-mail is not configured (CAIRN_SMTP_URL)') }, close() {} }
  }
  const transport = nodemailer.createTransport(options.smtpUrl, { from: options.from })
  return {
    enabled: true,
    async send(mail) {
      await transport.sendMail({ from: options.from, to: mail.to, subject: mail.subject, text: mail.text })
    },
    close() { transport.close() }
  }
}
