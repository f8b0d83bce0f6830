//! Validation errors that name the offending field, so the API can answer
//! every bad input with a 400 that says exactly what to fix.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Errors produced by domain rules.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DomainError {
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// A projection handle that the rules would not produce.
    #[error("projection not found")]
    ProjectionNotFound,
}

impl DomainError {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        DomainError::Validation(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }
}

/// Collects every field error of one input so a client sees all of them at
/// once instead of fixing one per round trip.
#[derive(Debug, Default)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }

    /// Records the error of a fallible check and returns its value if any.
    pub fn check<T>(&mut self, result: Result<T, DomainError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(DomainError::Validation(errors)) => {
                self.0.extend(errors);
                None
            }
            Err(DomainError::ProjectionNotFound) => {
                self.add("id", "no such projected entry");
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn finish(self) -> Result<(), DomainError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DomainError::Validation(self.0))
        }
    }
}
