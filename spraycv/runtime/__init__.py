"""Running a trained model: pre-processing, post-processing and predictors."""
