//! Addresses as the suppression list keys them: one normal form per address,
//! written once for the API, the send-time lookup and provider reports, so
//! the three always meet.
//!
//! Email: trimmed and lower-cased whole. RFC 5321 lets a local part be
//! case-sensitive, but no mailbox provider in use treats it so, and a
//! bounce report may spell the address otherwise than the user record did;
//! a suppression missed for a letter's case would send to an address that
//! bounces, which is what the list is there to prevent. Phone: trimmed and
//! in E.164 (`+` and 8–15 digits), the form every SMS provider of Herald
//! sends to (`providers::twilio::recipient_phone`); another form is not
//! rewritten, it is refused.

use crate::model::{ChannelType, User};

/// Channel types whose addresses a project may suppress.
pub const CHANNEL_TYPES: [ChannelType; 2] = [ChannelType::Email, ChannelType::Sms];

/// Whether the suppression list covers `ct`.
pub fn covers(ct: ChannelType) -> bool {
    CHANNEL_TYPES.contains(&ct)
}

/// The normal form of an address of `ct`, or why it is not one (a field
/// error's message).
pub fn normalize(ct: ChannelType, raw: &str) -> Result<String, &'static str> {
    let s = raw.trim();
    match ct {
        ChannelType::Email => {
            let s = s.to_lowercase();
            if crate::validate::is_email(&s) {
                Ok(s)
            } else {
                Err("must be an email address")
            }
        }
        ChannelType::Sms => {
            if crate::validate::is_e164(s) {
                Ok(s.to_string())
            } else {
                Err("must be a phone number in E.164 form (+ and 8–15 digits)")
            }
        }
        _ => Err("only email and sms addresses are suppressed"),
    }
}

/// The address a delivery of `ct` goes to, normalised: the recipient's
/// email or phone (`None`: the channel type has none, the recipient has
/// none, or it is not one the provider could send to).
pub fn of_recipient(ct: ChannelType, u: &User) -> Option<String> {
    let raw = match ct {
        ChannelType::Email => u.email.as_deref()?,
        ChannelType::Sms => u.phone.as_deref()?,
        _ => return None,
    };
    normalize(ct, raw).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_trimmed_and_lower_cased() {
        assert_eq!(
            normalize(ChannelType::Email, "  Bob.Smith@Example.COM "),
            Ok("bob.smith@example.com".to_string())
        );
        assert!(normalize(ChannelType::Email, "not an address").is_err());
        assert!(normalize(ChannelType::Email, "a@b").is_err());
    }

    #[test]
    fn phones_must_be_e164() {
        assert_eq!(
            normalize(ChannelType::Sms, " +15551234567 "),
            Ok("+15551234567".to_string())
        );
        assert!(normalize(ChannelType::Sms, "15551234567").is_err());
        assert!(normalize(ChannelType::Sms, "+1 555 123 4567").is_err());
    }

    #[test]
    fn other_channel_types_are_not_covered() {
        assert!(normalize(ChannelType::Chat, "x").is_err());
        assert!(!covers(ChannelType::WebPush));
        assert!(covers(ChannelType::Sms));
    }
}
