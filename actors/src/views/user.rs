//! A user as every API, the live feed and the events show it (`UserView`).

use crate::model::{Timestamp, User};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

// A user of the project (a `//` comment: a doc comment would become the
// schema's description in the OpenAPI document).
// Fields in the record's order: the bytes the record itself serialised to.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = User)]
pub struct UserView {
    pub id: Uuid,
    pub external_id: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub avatar: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub custom_fields: Map<String, Value>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl From<&User> for UserView {
    fn from(u: &User) -> Self {
        UserView {
            id: u.id,
            external_id: u.external_id.clone(),
            first_name: u.first_name.clone(),
            last_name: u.last_name.clone(),
            email: u.email.clone(),
            phone: u.phone.clone(),
            avatar: u.avatar.clone(),
            locale: u.locale.clone(),
            timezone: u.timezone.clone(),
            custom_fields: u.custom_fields.clone(),
            created_at: u.created_at,
            updated_at: u.updated_at,
        }
    }
}

impl UserView {
    /// The view of a user that may be gone: JSON null then.
    pub fn json(u: Option<&User>) -> Value {
        u.and_then(|u| serde_json::to_value(UserView::from(u)).ok())
            .unwrap_or(Value::Null)
    }
}
